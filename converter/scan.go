package converter

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds the nesting of skipped values, so that a hostile
// document of a million '[' cannot grow the stack without limit.
const maxDepth = 1000

// scanner reads JSON (RFC 8259) from data, one value at a time. It is a
// small hand-written reader instead of encoding/json because a document
// of 10,000 rules must decode in milliseconds and report every problem
// with its path; encoding/json into maps is an order of magnitude slower.
//
// The first syntax error stops the scan: err is set, and every method
// returns at once from then on.
//
// Comments, /* … */ and // to the end of the line, may stand wherever
// white space may, as FastJSON (Java Sentinel's parser) allows.
type scanner struct {
	data   []byte
	pos    int
	err    error
	errPos int // where err was found
}

func (s *scanner) failf(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf(format, args...)
		s.errPos = s.pos
	}
}

// ws skips white space and comments.
func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		case '/':
			if !s.comment() {
				return
			}
		default:
			return
		}
	}
}

// comment skips the comment at pos. A '/' that starts no comment, or a
// block comment without its end, is a syntax error; then the scan stops
// at the end of the document.
func (s *scanner) comment() bool {
	d := s.data
	if s.pos+1 < len(d) {
		switch d[s.pos+1] {
		case '/':
			i := s.pos + 2
			for i < len(d) && d[i] != '\n' {
				i++
			}
			s.pos = i
			return true
		case '*':
			for i := s.pos + 2; i+1 < len(d); i++ {
				if d[i] == '*' && d[i+1] == '/' {
					s.pos = i + 2
					return true
				}
			}
			s.failf("unterminated /* comment")
			s.pos = len(d)
			return false
		}
	}
	s.failf("unexpected '/': comments are /* … */ or // …")
	s.pos = len(d)
	return false
}

// peek skips white space and comments and returns the next byte, or 0 at
// the end.
//
// peek is called for every token: its fast path, a token right at pos, is
// inlined; white space and comments take skipSpace.
func (s *scanner) peek() (c byte) {
	// Written so that the inliner's cost stays under its budget (79 of
	// 80): a named result, no second index.
	if s.pos < len(s.data) {
		if c = s.data[s.pos]; notSpace[c] {
			return
		}
	}
	return s.skipSpace()
}

// notSpace marks the bytes that start neither white space nor a comment.
var notSpace = func() (t [256]bool) {
	for c := range t {
		t[c] = c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '/'
	}
	return t
}()

// skipSpace is peek's slow path, kept out of line so that peek inlines.
//
//go:noinline
func (s *scanner) skipSpace() byte {
	s.ws()
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// describe names the JSON type of the value starting with c, for messages.
func describe(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if c == '-' || (c >= '0' && c <= '9') {
		return "a number"
	}
	return strconv.QuoteRune(rune(c))
}

// what names the JSON type of the value at pos (after white space).
func (s *scanner) what() string {
	if s.peek(); s.pos >= len(s.data) {
		return "the end of the document"
	}
	if c := s.data[s.pos]; c >= utf8.RuneSelf {
		r, _ := utf8.DecodeRune(s.data[s.pos:])
		return strconv.QuoteRune(r)
	}
	return describe(s.data[s.pos])
}

// next moves to the next element of an array or the next key of an
// object after '[' / '{' was consumed: it consumes the separator, or the
// closing bracket and returns false. first says whether an element was
// read before.
func (s *scanner) next(closing byte, first bool) bool {
	if s.err != nil {
		return false
	}
	c := s.peek()
	if c == closing {
		s.pos++
		return false
	}
	if !first {
		if c != ',' {
			s.failf("expected ',' or %q, found %s", closing, s.what())
			return false
		}
		s.pos++
		c = s.peek()
	}
	if closing == '}' && c != '"' {
		s.failf("expected a string key, found %s", s.what())
		return false
	}
	if closing == ']' && s.pos >= len(s.data) {
		s.failf("unexpected end of the document in an array")
		return false
	}
	return true
}

// key reads an object key and the ':' after it. The result aliases data
// when the key has no escapes.
func (s *scanner) key() ([]byte, bool) {
	raw, esc, ok := s.stringRaw()
	if !ok {
		return nil, false
	}
	if c := s.peek(); c != ':' {
		s.failf("expected ':' after an object key, found %s", s.what())
		return nil, false
	}
	s.pos++
	s.peek()
	if esc {
		return []byte(unescape(raw)), true
	}
	return raw, true
}

// stringRaw reads a string at pos and returns its bytes between the
// quotes, escapes unresolved, and whether it has any.
func (s *scanner) stringRaw() (raw []byte, escaped, ok bool) {
	if s.err != nil {
		return nil, false, false
	}
	start := s.pos + 1
	i := start
	ascii := true
	for i < len(s.data) {
		c := s.data[i]
		if plain[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			raw = s.data[start:i]
			if !ascii && !utf8.Valid(raw) {
				s.pos = start
				s.failf("invalid UTF-8 in a string")
				return nil, false, false
			}
			s.pos = i + 1
			return raw, escaped, true
		case c == '\\':
			escaped = true
			if i+1 >= len(s.data) {
				s.pos = i
				s.failf("unterminated string")
				return nil, false, false
			}
			switch s.data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(s.data) || !isHex4(s.data[i+2:i+6]) {
					s.pos = i
					s.failf(`invalid \u escape in a string`)
					return nil, false, false
				}
				i += 6
			default:
				s.pos = i
				s.failf("invalid escape %q in a string", s.data[i:i+2])
				return nil, false, false
			}
		case c < 0x20:
			s.pos = i
			s.failf("control character %#02x in a string", c)
			return nil, false, false
		default:
			if c >= 0x80 {
				ascii = false
			}
			i++
		}
	}
	s.pos = len(s.data)
	s.failf("unterminated string")
	return nil, false, false
}

// plain marks the bytes a string may hold that need no attention: not
// '"', '\\', a control character or a byte of a multi-byte character.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c <= '9':
			r |= rune(c - '0')
		case c >= 'a':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// unescape resolves the escapes of a string already checked by stringRaw.
// A lone surrogate becomes U+FFFD, as encoding/json does.
func unescape(raw []byte) string {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch raw[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(raw[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					if r2 := hex4(raw[i+2 : i+6]); utf16.DecodeRune(r, r2) != utf8.RuneError {
						r = utf16.DecodeRune(r, r2)
						i += 6
						out = utf8.AppendRune(out, r)
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // '"', '\\', '/'
			out = append(out, raw[i+1])
		}
		i += 2
	}
	return string(out)
}

// str reads a string value at pos.
func (s *scanner) str() (string, bool) {
	raw, esc, ok := s.stringRaw()
	if !ok {
		return "", false
	}
	if esc {
		return unescape(raw), true
	}
	if string(raw) == "default" { // most limitApps: no allocation
		return "default", true
	}
	return string(raw), true
}

// number reads a number at pos and returns its text; integral says it has
// neither a fraction nor an exponent.
func (s *scanner) number() (raw []byte, integral, ok bool) {
	if s.err != nil {
		return nil, false, false
	}
	d := s.data
	start, i := s.pos, s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		return i > j
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case !digits():
		s.pos = i
		s.failf("invalid number")
		return nil, false, false
	}
	integral = true
	if i < len(d) && d[i] == '.' {
		i++
		integral = false
		if !digits() {
			s.pos = i
			s.failf("invalid number: no digit after '.'")
			return nil, false, false
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		integral = false
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if !digits() {
			s.pos = i
			s.failf("invalid number: no digit in the exponent")
			return nil, false, false
		}
	}
	s.pos = i
	return d[start:i], integral, true
}

// literal reads true, false or null at pos.
func (s *scanner) literal(lit string) bool {
	if s.err != nil {
		return false
	}
	if len(s.data)-s.pos >= len(lit) && string(s.data[s.pos:s.pos+len(lit)]) == lit {
		s.pos += len(lit)
		return true
	}
	s.failf("invalid literal, expected %s", lit)
	return false
}

// skip reads and discards the value at pos, checking its syntax.
func (s *scanner) skip() { s.skipDepth(0) }

func (s *scanner) skipDepth(depth int) {
	if depth > maxDepth {
		s.failf("nesting deeper than %d", maxDepth)
		return
	}
	switch c := s.peek(); c {
	case '{':
		s.pos++
		for first := true; s.next('}', first); first = false {
			if _, ok := s.key(); !ok {
				return
			}
			s.skipDepth(depth + 1)
		}
	case '[':
		s.pos++
		for first := true; s.next(']', first); first = false {
			s.skipDepth(depth + 1)
		}
	case '"':
		s.stringRaw()
	case 't':
		s.literal("true")
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			s.number()
			return
		}
		s.failf("expected a JSON value, found %s", s.what())
	}
}

// bom is the UTF-8 byte order mark, which FastJSON skips at the start of a
// document.
const bom = "\xef\xbb\xbf"

// position returns the line and column (both from 1; the column counts
// characters) of each offset, in one pass over data.
func position(data []byte, offsets []int) (lines, cols []int) {
	order := make([]int, len(offsets))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return offsets[a] - offsets[b] })
	lines, cols = make([]int, len(offsets)), make([]int, len(offsets))
	line, lineStart, i := 1, 0, 0
	if bytes.HasPrefix(data, []byte(bom)) {
		lineStart, i = len(bom), len(bom)
	}
	for _, k := range order {
		off := min(max(offsets[k], 0), len(data))
		for ; i < off; i++ {
			if data[i] == '\n' {
				line, lineStart = line+1, i+1
			}
		}
		lines[k] = line
		cols[k] = 1 + utf8.RuneCount(data[min(lineStart, off):off])
	}
	return lines, cols
}

// end checks that only white space follows the top-level value.
func (s *scanner) end() {
	if s.peek(); s.pos < len(s.data) && s.err == nil {
		s.failf("unexpected %s after the top-level value", s.what())
	}
}
