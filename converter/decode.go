package converter

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/bulwark-go/bulwark/core/rule"
)

// seg is one step of a JSON path: a key, or an index when key is "".
type seg struct {
	key   string
	index int
}

// decoder reads rule documents: a scanner plus the problems found so far
// and the path of the value being read.
type decoder struct {
	scanner
	problems []Problem
	warnings []Problem // errIgnored
	path     []seg
	// rule is the index of the rule being read, -1 outside rules.
	rule int
	// at is the offset a problem found now is about: the value being
	// read, or the rule being validated.
	at int
	// wrappedAt: the rule being validated is a dashboard entity's, inside
	// its "rule" (validation locates fields there).
	wrappedAt bool
	// rec, when not nil, records where the rules of the next top-level
	// list are (for EncodeOver).
	rec *listRec
}

// listRec is where a list of rules is in a document.
type listRec struct {
	open, close int // offsets of '[' and ']'; open < 0 when there is no array
	elems       []elemRec
}

// elemRec is one element of a list: its text is data[start:end]; ok
// says it decoded to a rule without a problem.
type elemRec struct {
	start, end int
	ok         bool
}

func (d *decoder) push(key string) { d.path = append(d.path, seg{key: key}) }
func (d *decoder) pushIndex(i int) { d.path = append(d.path, seg{index: i}) }
func (d *decoder) pop()            { d.path = d.path[:len(d.path)-1] }

func (d *decoder) pathString() string {
	var b strings.Builder
	for i, s := range d.path {
		if s.key == "" {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
	}
	return b.String()
}

// problem records a problem at d.at. Its Line is -1 and its Column the
// offset until locate turns them into a position.
func (d *decoder) problem(kind error, format string, args ...any) {
	d.problems = append(d.problems, Problem{Path: d.pathString(), Rule: d.rule, Line: -1, Column: d.at,
		Message: fmt.Sprintf(format, args...), Err: kind})
}

// warn records that the field at d.at was accepted and ignored.
func (d *decoder) warn(why string) {
	d.warnings = append(d.warnings, Problem{Path: d.pathString(), Rule: d.rule, Line: -1, Column: d.at,
		Message: "ignored: " + why, Err: errIgnored})
}

// wrongType records that the value at pos is not of the expected JSON
// type, and skips it.
func (d *decoder) wrongType(want string) {
	what := d.what()
	d.at = d.pos
	d.problem(ErrSyntax, "expected %s, found %s", want, what)
	d.skip()
}

// null consumes a null at pos and reports whether there was one. A null
// field is a field left out.
func (d *decoder) null() bool {
	if d.peek() == 'n' {
		d.literal("null")
		return true
	}
	return false
}

func (d *decoder) readString() (string, bool) {
	if d.null() {
		return "", false
	}
	if d.peek() != '"' {
		d.wrongType("a string")
		return "", false
	}
	return d.str()
}

// readStringFrom is readString that returns the element of common equal
// to the string, if any, instead of a new copy.
func (d *decoder) readStringFrom(common []string) (string, bool) {
	if d.null() {
		return "", false
	}
	if d.peek() != '"' {
		d.wrongType("a string")
		return "", false
	}
	raw, esc, ok := d.stringRaw()
	if !ok {
		return "", false
	}
	if esc {
		return unescape(raw), true
	}
	for _, c := range common {
		if c == string(raw) {
			return c, true
		}
	}
	return string(raw), true
}

func (d *decoder) readBool() (bool, bool) {
	switch d.peek() {
	case 'n':
		d.literal("null")
		return false, false
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	}
	d.wrongType("true or false")
	return false, false
}

func isNumberStart(c byte) bool { return c == '-' || (c >= '0' && c <= '9') }

func parseFloat(raw []byte) (float64, error) {
	// raw is a checked JSON number and ParseFloat keeps no reference to
	// it, so the string needs no copy.
	return strconv.ParseFloat(unsafe.String(unsafe.SliceData(raw), len(raw)), 64)
}

func (d *decoder) readFloat() (float64, bool) {
	if d.null() {
		return 0, false
	}
	if !isNumberStart(d.peek()) {
		d.wrongType("a number")
		return 0, false
	}
	raw, _, ok := d.number()
	if !ok {
		return 0, false
	}
	f, err := parseFloat(raw)
	if err != nil {
		d.problem(ErrInvalid, "number %s is out of range", raw)
		return 0, false
	}
	return f, true
}

// readInt reads an integer that fits Java's int (bits 32) or long (64).
// 10.0 and 1e3 are integers; 10.5 is not.
func (d *decoder) readInt(bits int) (int64, bool) {
	if d.null() {
		return 0, false
	}
	if !isNumberStart(d.peek()) {
		d.wrongType("an integer")
		return 0, false
	}
	raw, integral, ok := d.number()
	if !ok {
		return 0, false
	}
	java := "long"
	if bits == 32 {
		java = "int"
	}
	lo, hi := int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
	if integral && len(raw) <= 18 {
		var v int64
		neg := raw[0] == '-'
		digits := raw
		if neg {
			digits = raw[1:]
		}
		for _, c := range digits {
			v = v*10 + int64(c-'0')
		}
		if neg {
			v = -v
		}
		if v < lo || v > hi {
			d.problem(ErrInvalid, "%s is out of the range of a Java %s", raw, java)
			return 0, false
		}
		return v, true
	}
	if integral {
		// More than 18 digits: exact parse, since a float64 would round.
		v, err := strconv.ParseInt(string(raw), 10, bits)
		if err != nil {
			d.problem(ErrInvalid, "%s is out of the range of a Java %s", raw, java)
			return 0, false
		}
		return v, true
	}
	f, err := parseFloat(raw)
	switch {
	case err != nil || f < float64(lo) || f >= -float64(lo):
		d.problem(ErrInvalid, "%s is out of the range of a Java %s", raw, java)
		return 0, false
	case f != math.Trunc(f):
		d.problem(ErrInvalid, "expected an integer, found %s", raw)
		return 0, false
	}
	return int64(f), true
}

// enum describes the values of an enum field: its Go values, Java's
// numbers for them and their names.
type enum struct {
	values []int // Go values
	java   []int // Java's number of values[i]
	names  []string
	want   string // "0 (thread) or 1 (QPS)"
}

// newEnum describes an enum whose Go values are Java's numbers; see
// withJava for one whose are not.
func newEnum[E ~int](values ...E) *enum {
	e := &enum{}
	for _, v := range values {
		e.values = append(e.values, int(v))
		e.names = append(e.names, any(v).(fmt.Stringer).String())
	}
	return e.withJava(e.values...)
}

// withJava sets Java's numbers of the values, in order, and returns e.
func (e *enum) withJava(numbers ...int) *enum {
	e.java = numbers
	parts := make([]string, len(e.values))
	for i := range e.values {
		parts[i] = fmt.Sprintf("%d (%s)", e.java[i], e.names[i])
	}
	switch len(parts) {
	case 1:
		e.want = parts[0]
	default:
		e.want = strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
	}
	return e
}

// javaOf returns Java's number of the Go value v (v itself when it is
// none of the enum's values, which Validate refuses).
func (e *enum) javaOf(v int) int {
	for i, x := range e.values {
		if x == v {
			return e.java[i]
		}
	}
	return v
}

// readEnum reads an enum as its number or its name, in any case.
func (d *decoder) readEnum(e *enum) (int, bool) {
	switch c := d.peek(); {
	case c == 'n':
		d.literal("null")
		return 0, false
	case c == '"':
		s, ok := d.str()
		if !ok {
			return 0, false
		}
		for i, name := range e.names {
			if strings.EqualFold(s, name) {
				return e.values[i], true
			}
		}
		d.problem(ErrInvalid, "unknown name %q: expected %s", s, e.want)
		return 0, false
	case isNumberStart(c):
		v, ok := d.readInt(32)
		if !ok {
			return 0, false
		}
		for i, x := range e.java {
			if int64(x) == v {
				return e.values[i], true
			}
		}
		d.problem(ErrInvalid, "expected %s, found %d", e.want, v)
		return 0, false
	}
	d.wrongType("a number or a name (" + e.want + ")")
	return 0, false
}

// field is one JSON field of a type T: its Java name and how to read it
// into a T. dec consumes the value at pos; a null leaves t unchanged.
type field[T any] struct {
	name string
	dec  func(d *decoder, t *T)
}

// object describes a JSON object that decodes into a T.
type object[T any] struct {
	fields   []field[T]
	required uint64 // bit i: fields[i] must be present
	// ignored are keys accepted and discarded: the dashboard's entity
	// fields and getters FastJSON writes. Their functions check and skip
	// the value.
	ignored []ignored
	// wrapped: the dashboard's {"rule": {…}} entity wrapper is accepted.
	wrapped bool
}

type ignored struct {
	name string
	skip func(d *decoder)
	// legacy, when set, says which Sentinel release wrote the field and
	// why it is ignored; reading it is a warning.
	legacy string
}

func newObject[T any](fields []field[T], required ...string) *object[T] {
	o := &object[T]{fields: fields}
	for _, name := range required {
		o.required |= 1 << o.field([]byte(name))
	}
	return o
}

// field returns the index of the field named key, or -1. A linear search
// is faster than a map for a dozen names, and converting key in the
// comparison does not allocate.
func (o *object[T]) field(key []byte) int {
	for i := range o.fields {
		if len(o.fields[i].name) == len(key) && o.fields[i].name == string(key) {
			return i
		}
	}
	return -1
}

func (o *object[T]) ignoredKey(key []byte) *ignored {
	for i := range o.ignored {
		if o.ignored[i].name == string(key) {
			return &o.ignored[i]
		}
	}
	return nil
}

// span is where a field's value starts in the document.
type span struct {
	field int
	pos   int
}

// members is what decodeInto saw of an object's keys.
type members struct {
	present uint64   // bit i: o.fields[i] was there
	spans   []span   // with a dashboard wrapper: where each field's value starts
	inner   int      // where the wrapper's "rule" object starts, or -1
	buf     [24]span // spans' first backing array
}

// decodeInto reads the object at pos into t, which holds the defaults; a
// null leaves t as it is. It returns whether there was an object, and
// whether it was the dashboard's wrapper, so that the caller can name the
// inner rule in paths.
func decodeInto[T any](d *decoder, o *object[T], t *T) (isObject, wrapped bool) {
	if d.null() {
		return false, false
	}
	if d.peek() != '{' {
		d.wrongType("an object")
		return false, false
	}
	objStart := d.pos
	defaults := *t
	var m members
	if !readMembers(d, o, t, &m) {
		return false, false
	}
	if m.inner >= 0 {
		*t = defaults
		readWrapped(d, o, t, &m)
		return true, true
	}
	if missing := o.required &^ m.present; missing != 0 {
		d.at = objStart
		for i, f := range o.fields {
			if missing&(1<<i) != 0 {
				d.problem(ErrInvalid, "required field %q is missing", f.name)
			}
		}
	}
	return true, false
}

// readMembers reads the members of the object at pos: known fields into
// t, ignored ones (entity and legacy fields) skipped, a dashboard
// wrapper's "rule" remembered for readWrapped, and an unknown key reported
// (with a suggestion when it differs from a field only in case). It
// returns false when the document ends or is not JSON.
func readMembers[T any](d *decoder, o *object[T], t *T, m *members) bool {
	d.pos++ // '{'
	m.spans, m.inner = m.buf[:0], -1
	for first := true; d.next('}', first); first = false {
		keyStart := d.pos
		key, ok := d.key()
		if !ok {
			return false
		}
		d.at = d.pos
		switch i, ig := o.field(key), o.ignoredKey(key); {
		case i >= 0:
			m.present |= 1 << i
			if o.wrapped {
				m.spans = append(m.spans, span{i, d.pos})
			}
			d.push(o.fields[i].name)
			o.fields[i].dec(d, t)
		case ig != nil:
			d.push(ig.name)
			if ig.legacy != "" {
				d.warn(ig.legacy)
			}
			ig.skip(d)
		case o.wrapped && string(key) == "rule":
			d.push("rule")
			m.inner = wrappedRule(d, m.inner)
		default:
			d.push(string(key))
			d.at = keyStart
			d.problem(ErrSyntax, "%s", unknownField(o, string(key)))
			d.skip()
		}
		d.pop()
	}
	return d.err == nil
}

// wrappedRule skips the value of a dashboard entity's "rule" key and
// returns where it starts if it is an object (inner, the previous answer,
// if it is null).
func wrappedRule(d *decoder, inner int) int {
	switch d.peek() {
	case '{':
		inner = d.pos
		d.skip()
	case 'n':
		d.literal("null")
	default:
		d.wrongType("an object (the rule of a dashboard entity)")
	}
	return inner
}

// unknownField is the problem of an unknown key, with the field it likely
// misspells, if any: one that differs only in case, else the nearest
// ("cuont": did you mean "count"?).
func unknownField[T any](o *object[T], name string) string {
	names := make([]string, len(o.fields))
	for i, f := range o.fields {
		if strings.EqualFold(f.name, name) {
			return fmt.Sprintf("unknown field (did you mean %q?)", f.name)
		}
		names[i] = f.name
	}
	if n := nearest(name, names); n != "" {
		return fmt.Sprintf("unknown field (did you mean %q?)", n)
	}
	return "unknown field"
}

// readWrapped reads a dashboard entity's rule (at m.inner) into t, then
// checks the entity's fields beside it: they are the entity's getters,
// copies of the rule's fields, and must agree with the rule. It leaves pos
// after the entity.
func readWrapped[T any](d *decoder, o *object[T], t *T, m *members) {
	end := d.pos
	d.pos = m.inner
	d.push("rule")
	flat := *o
	flat.wrapped = false
	decodeInto(d, &flat, t)
	d.pop()
	for _, sp := range m.spans {
		c := *t
		n := len(d.problems)
		d.pos, d.at = sp.pos, sp.pos
		d.push(o.fields[sp.field].name)
		o.fields[sp.field].dec(d, &c)
		d.problems = d.problems[:n]
		if !reflect.DeepEqual(c, *t) {
			d.problem(ErrInvalid, "differs from rule.%s: beside \"rule\", a field must be a copy of the rule's", o.fields[sp.field].name)
		}
		d.pop()
	}
	d.pos = end
}

// readList reads a JSON array of T at pos, each element starting from
// defaults; empty arrays and null give nil. check, if not nil, finishes
// each element (applies its defaults) and validates it; its problems
// (*rule.FieldError) are reported under the element's path unless
// decoding reported that path already.
//
// With name, the elements are rules: problems carry the rule's index and
// resource (name's result), a rule with a problem is left out of the
// result, and d.rec records the list. Without, the list is a part of a
// rule (paramFlowItemList).
func readList[T any](d *decoder, o *object[T], defaults func() T, check func(*T) error, name func(*T) string) []T {
	if d.null() {
		return nil
	}
	if d.peek() != '[' {
		d.wrongType("an array")
		return nil
	}
	rec := d.rec
	if name == nil {
		rec = nil
	}
	if rec != nil {
		rec.open = d.pos
	}
	d.pos++
	// Guess the number of rules of a top-level list from the size left
	// (a rule takes well over 64 bytes) so that the slice grows at most a
	// few times. Nested lists (paramFlowItemList) are small: no guess.
	var out []T
	if n := (len(d.data) - d.pos) / 128; n > 16 && name != nil {
		out = make([]T, 0, n)
	}
	for i := 0; d.next(']', i == 0); i++ {
		d.pushIndex(i)
		start := d.pos
		n, w := len(d.problems), len(d.warnings)
		if name != nil {
			d.rule = i
		}
		ok := false
		if d.peek() == 'n' {
			d.at = d.pos
			d.problem(ErrSyntax, "expected an object, found null")
			d.literal("null")
		} else {
			// Decode in place: a T on the stack would escape through the
			// field functions and cost an allocation per rule.
			out = append(out, defaults())
			t := &out[len(out)-1]
			isObject, wrapped := decodeInto(d, o, t)
			if d.err != nil {
				return nil
			}
			if isObject && check != nil {
				if err := check(t); err != nil {
					if wrapped {
						d.push("rule")
					}
					d.at = start
					d.wrappedAt = wrapped
					d.validation(err, d.problems[n:])
					d.wrappedAt = false
					if wrapped {
						d.pop()
					}
				}
			}
			ok = isObject && len(d.problems) == n
			if name != nil && (len(d.problems) > n || len(d.warnings) > w) {
				res := name(t)
				for k := n; k < len(d.problems); k++ {
					d.problems[k].Resource = res
				}
				for k := w; k < len(d.warnings); k++ {
					d.warnings[k].Resource = res
				}
			}
			if !isObject || (name != nil && !ok) {
				out = out[:len(out)-1]
			}
		}
		if rec != nil {
			rec.elems = append(rec.elems, elemRec{start, d.pos, ok})
		}
		if name != nil {
			d.rule = -1
		}
		d.pop()
	}
	if rec != nil {
		rec.close = d.pos - 1
	}
	if len(out) == 0 {
		return nil
	}
	if cap(out) > 2*len(out)+16 {
		out = append([]T(nil), out...) // do not keep a large guess alive
	}
	return out
}

// validation reports the problems of a Validate method under the current
// path, each at its field's path, except paths already in seen. A problem
// of the rule as a whole is left out when decoding refused a value of the
// rule (ErrInvalid): it follows from that (a system rule whose only
// threshold was refused sets none).
func (d *decoder) validation(err error, seen []Problem) {
	base := d.pathString()
	refused := slices.ContainsFunc(seen, func(p Problem) bool { return p.Err == ErrInvalid })
	for _, fe := range rule.Fields(err) {
		path, at := base, d.at
		if fe.Field != "" {
			path = base + "." + fe.Field
			at = fieldAt(d.data, d.at, fe.Field, d.wrappedAt) // at the field, not the rule's '{'
		} else if refused {
			continue
		}
		dup := false
		for _, p := range seen {
			if p.Path == path {
				dup = true
				break
			}
		}
		if !dup {
			d.problems = append(d.problems, Problem{Path: path, Rule: d.rule, Line: -1, Column: at, Message: fe.Err.Error(), Err: ErrInvalid})
		}
	}
}

// locate turns the offsets of the problems and warnings into lines and
// columns.
func (d *decoder) locate() {
	var offs []int
	for _, ps := range [][]Problem{d.problems, d.warnings} {
		for _, p := range ps {
			if p.Line < 0 {
				offs = append(offs, p.Column)
			}
		}
	}
	if len(offs) == 0 {
		return
	}
	lines, cols := position(d.data, offs)
	k := 0
	for _, ps := range [][]Problem{d.problems, d.warnings} {
		for i := range ps {
			if ps[i].Line < 0 {
				ps[i].Line, ps[i].Column = lines[k], cols[k]
				k++
			}
		}
	}
}

// result turns the scan's outcome into an error: nil, or a *DecodeError
// that is partial when every problem is confined to a rule.
func (d *decoder) result() *DecodeError {
	if d.err != nil {
		lines, cols := position(d.data, []int{d.errPos})
		d.warnings = nil
		return &DecodeError{Problems: []Problem{{Rule: -1, Line: lines[0], Column: cols[0],
			Message: "not valid JSON: " + d.err.Error(), Err: ErrSyntax}}}
	}
	d.locate()
	if len(d.problems) == 0 {
		return nil
	}
	partial := true
	for _, p := range d.problems {
		if p.Rule < 0 {
			partial = false
			break
		}
	}
	return &DecodeError{Problems: d.problems, Partial: partial}
}

// start checks the document's size and that it is not blank, and skips a
// byte order mark.
func start(data []byte) (*decoder, error) {
	d := &decoder{scanner: scanner{data: data}, rule: -1}
	if len(data) >= len(bom) && string(data[:len(bom)]) == bom {
		d.pos = len(bom)
	}
	if d.peek() == 0 && d.pos == len(data) && d.err == nil {
		return nil, &DecodeError{Problems: []Problem{{Rule: -1, Message: "empty document (write [] for no rules)", Err: ErrSyntax}}}
	}
	return d, nil
}
