package converter

// The capabilities of this package's codecs besides Convert and Encode,
// which package internal/codec reaches (it checks that every codec has
// them); the tests of this package call them through these.
type (
	canInspect[T any] interface {
		Inspect(data []byte) (T, []Problem, error)
	}
	canEncodeOver[T any] interface {
		EncodeOver(prev []byte, v T) ([]byte, error)
	}
	canEncodeCompact[T any] interface {
		EncodeCompact(v T) ([]byte, error)
	}
)
