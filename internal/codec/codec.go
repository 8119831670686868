package codec

import "github.com/bulwark-go/bulwark/converter"

// inspector is a converter that also reports what it accepted but ignored.
type inspector[T any] interface {
	Inspect(data []byte) (v T, warnings []converter.Problem, err error)
}

// patcher is an encoder that can write a value over the document it was
// read from.
type patcher[T any] interface {
	EncodeOver(prev []byte, v T) ([]byte, error)
}

// compacter is an encoder that can also write a value compactly.
type compacter[T any] interface {
	EncodeCompact(v T) ([]byte, error)
}

// Inspect decodes data with c and returns the value and error Convert
// returns, with the warnings: fields accepted and ignored, in document
// order. A converter that does not inspect gives no warnings.
func Inspect[T any](c converter.Converter[T], data []byte) (T, []converter.Problem, error) {
	if in, ok := c.(inspector[T]); ok {
		return in.Inspect(data)
	}
	v, err := c.Convert(data)
	return v, nil, err
}

// EncodeOver encodes v over prev, the document v was read from, keeping
// what v does not model; when prev does not decode, or e cannot write
// over a document, it is e.Encode(v).
func EncodeOver[T any](e converter.Encoder[T], prev []byte, v T) ([]byte, error) {
	if p, ok := e.(patcher[T]); ok {
		return p.EncodeOver(prev, v)
	}
	return e.Encode(v)
}

// EncodeCompact encodes v in the compact canonical form; an encoder
// without one writes e.Encode(v).
func EncodeCompact[T any](e converter.Encoder[T], v T) ([]byte, error) {
	if c, ok := e.(compacter[T]); ok {
		return c.EncodeCompact(v)
	}
	return e.Encode(v)
}
