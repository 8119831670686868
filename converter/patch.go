package converter

import (
	"bytes"
	"reflect"
	"slices"
	"strconv"

	"github.com/bulwark-go/bulwark/core/circuitbreaker"
	"github.com/bulwark-go/bulwark/core/flow"
	"github.com/bulwark-go/bulwark/core/hotspot"
)

// Writing over a document (EncodeOver).
//
// The previous document is decoded with the position of every rule
// recorded. Each rule of the new value is matched to a rule of the
// previous document: first an equal rule of the same identity (see the
// identity functions), then, in document order, the next unmatched rule
// of the same identity. A matched equal rule is copied as its original
// text; a matched changed rule is patched (patchRule); an unmatched rule
// is new and encoded as Encode does. The text between and around rules
// (white space, comments, the document before and after the array) is
// kept. The result is decoded again and compared with the value; when it
// differs (it should not), the caller falls back to Encode.

// encodeOver is EncodeOver that also tells whether it fell back to
// Encode although prev decoded (which tests treat as a bug).
func (c list[T]) encodeOver(prev []byte, rules []T) (out []byte, fellBack bool, err error) {
	fresh, err := c.Encode(rules)
	if err != nil {
		return nil, false, err
	}
	rules = c.k.normalizeAll(rules) // as decoded rules are
	rec := &listRec{open: -1}
	old, _, d, err := c.decode(prev, rec)
	if de, _ := err.(*DecodeError); d == nil || rec.open < 0 || (de != nil && !de.Partial) {
		return fresh, false, nil // prev does not decode, or is null
	}
	p := patcher{data: prev}
	arr, ok := patchList(&p, c.k, rec, old, rules, "  ")
	if !ok {
		return fresh, true, nil
	}
	out = make([]byte, 0, len(prev)+len(arr))
	out = append(out, prev[:rec.open]...)
	out = append(out, arr...)
	out = append(out, prev[rec.close+1:]...)
	if back, err := c.Convert(out); err != nil || !equalLists(c.k, back, rules) {
		return fresh, true, nil
	}
	return out, false, nil
}

// encodeOver is EncodeOver that also tells whether it fell back to
// Encode although prev decoded.
func (c ruleSet) encodeOver(prev []byte, rs Rules) (out []byte, fellBack bool, err error) {
	fresh, err := c.Encode(rs)
	if err != nil {
		return nil, false, err
	}
	rs = normalizeSet(rs) // as decoded rules are
	var recs setRec
	for i := range recs {
		recs[i].open = -1
	}
	old, _, d, err := c.decode(prev, &recs)
	if de, _ := err.(*DecodeError); d == nil || (de != nil && !de.Partial) {
		return fresh, false, nil
	}
	d.pos = 0
	if len(prev) >= len(bom) && string(prev[:len(bom)]) == bom {
		d.pos = len(bom)
	}
	if d.peek() != '{' {
		return fresh, false, nil // null
	}
	p := patcher{data: prev}
	obj, ok := p.split(d.pos)
	if !ok {
		return fresh, true, nil
	}
	// The new text of each kind's array (nil: keep prev's value).
	var arrays [len(kindKeys)][]byte
	var have, oks [len(kindKeys)]bool
	arrays[0], have[0], oks[0] = patchKind(&p, flowKind, &recs[0], old.Flow, rs.Flow)
	arrays[1], have[1], oks[1] = patchKind(&p, cbKind, &recs[1], old.CircuitBreaker, rs.CircuitBreaker)
	arrays[2], have[2], oks[2] = patchKind(&p, sysKind, &recs[2], old.System, rs.System)
	arrays[3], have[3], oks[3] = patchKind(&p, authKind, &recs[3], old.Authority, rs.Authority)
	arrays[4], have[4], oks[4] = patchKind(&p, hotKind, &recs[4], old.Hotspot, rs.Hotspot)
	if oks != [len(kindKeys)]bool{true, true, true, true, true} {
		return fresh, true, nil
	}
	// The value of the last member of each kind (the one that counts) is
	// replaced; the kinds prev lacks and rs has are appended.
	last := map[string]int{}
	for j, it := range obj.items {
		last[it.key] = j
	}
	with := make([][]byte, len(obj.items))
	var missing []int
	for i, key := range kindKeys {
		if j, found := last[key]; found {
			with[j] = arrays[i]
		} else if have[i] {
			missing = append(missing, i)
		}
	}
	out = make([]byte, 0, len(prev)+len(fresh)/4)
	pos := 0
	for j, it := range obj.items {
		if with[j] != nil {
			out = append(out, prev[pos:it.val]...)
			out = append(out, with[j]...)
			pos = it.end
		}
	}
	if len(missing) > 0 {
		at := obj.open + 1
		if len(obj.items) > 0 {
			at = obj.items[len(obj.items)-1].end
		}
		out = append(out, prev[pos:at]...)
		pos = at
		lead := p.memberLead(obj, "\n  ")
		for n, i := range missing {
			if n > 0 || len(obj.items) > 0 {
				out = append(out, ',')
			}
			out = append(out, lead...)
			out = append(out, '"')
			out = append(out, kindKeys[i]...)
			out = append(out, `": `...)
			out = append(out, arrays[i]...)
		}
		if len(obj.items) == 0 {
			out = append(out, '\n')
		}
	}
	out = append(out, prev[pos:]...)
	back, err := c.Convert(out)
	if err != nil || !equalLists(flowKind, back.Flow, rs.Flow) || !equalLists(cbKind, back.CircuitBreaker, rs.CircuitBreaker) ||
		!equalLists(sysKind, back.System, rs.System) || !equalLists(authKind, back.Authority, rs.Authority) ||
		!equalLists(hotKind, back.Hotspot, rs.Hotspot) {
		return fresh, true, nil
	}
	return out, false, nil
}

// item is a member of an object or an element of an array: the text
// before it starts at lead (after '{', '[' or ','); it starts at start
// (a member's key, an element's value); its value is data[val:end].
type item struct {
	lead, start int
	key         string
	val, end    int
}

// container is an object or an array: the offsets of its brackets and its
// items.
type container struct {
	open, close int
	items       []item
}

// patcher writes over a previous document, data.
type patcher struct {
	data []byte
	enc  encoder
}

// split reads the object or array at pos of a document known to be
// valid JSON.
func (p *patcher) split(pos int) (container, bool) {
	return splitIn(p.data, pos)
}

func splitIn(data []byte, pos int) (container, bool) {
	s := scanner{data: data, pos: pos}
	if pos >= len(data) || (data[pos] != '{' && data[pos] != '[') {
		return container{}, false
	}
	isObject := data[pos] == '{'
	closing := byte(']')
	if isObject {
		closing = '}'
	}
	c := container{open: pos}
	s.pos++
	lead := s.pos
	for {
		if s.peek() == closing {
			c.close = s.pos
			return c, s.err == nil
		}
		it := item{lead: lead, start: s.pos}
		if isObject {
			key, ok := s.key()
			if !ok {
				return container{}, false
			}
			it.key = string(key)
		}
		it.val = s.pos
		s.skip()
		it.end = s.pos
		if s.err != nil {
			return container{}, false
		}
		c.items = append(c.items, it)
		switch s.peek() {
		case ',':
			s.pos++
			lead = s.pos
		case closing:
		default:
			return container{}, false
		}
	}
}

// trail is the text between item i and the comma after it; the text after
// the last item is the container's closing text, not its trail.
func (c *container) trail(i int) [2]int {
	if i+1 < len(c.items) {
		return [2]int{c.items[i].end, c.items[i+1].lead - 1}
	}
	return [2]int{c.items[i].end, c.items[i].end}
}

// closingText is the text before the closing bracket.
func (c *container) closingText() [2]int {
	if len(c.items) == 0 {
		return [2]int{c.open + 1, c.close}
	}
	return [2]int{c.items[len(c.items)-1].end, c.close}
}

// memberLead is the text to put before an added item: the first item's,
// when it is white space only; else a new line with the first item's
// indentation, or def.
func (p *patcher) memberLead(c container, def string) string {
	if len(c.items) == 0 {
		return def
	}
	lead := p.data[c.items[0].lead:c.items[0].start]
	if isBlank(lead) {
		return string(lead)
	}
	if i := bytes.LastIndexByte(lead, '\n'); i >= 0 && isBlank(lead[i+1:]) {
		return "\n" + string(lead[i+1:])
	}
	return def
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// part is one item to write: the text before it, itself, and after it.
type part struct{ lead, body, trail []byte }

// join writes a container: open, the parts separated by commas, the
// closing text and close.
func join(open byte, parts []part, closing []byte, close byte) []byte {
	n := 2 + len(closing)
	for _, pt := range parts {
		n += 1 + len(pt.lead) + len(pt.body) + len(pt.trail)
	}
	out := make([]byte, 0, n)
	out = append(out, open)
	for i, pt := range parts {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, pt.lead...)
		out = append(out, pt.body...)
		out = append(out, pt.trail...)
	}
	out = append(out, closing...)
	return append(out, close)
}

// fresh encodes one rule as Encode does.
func fresh[T any](p *patcher, k *kind[T], r *T) []byte {
	p.enc.buf = p.enc.buf[:0]
	p.enc.problems = p.enc.problems[:0]
	encodeRule(&p.enc, "", k, 0, r)
	return slices.Clone(p.enc.buf)
}

// patchKind writes the rules of one kind of a rule set over the array
// rec records: the new array text, or nil to keep the value in prev (a
// null or absent kind without rules); have says rules has rules; ok is
// false when patching failed.
func patchKind[T any](p *patcher, k *kind[T], rec *listRec, old, rules []T) (arr []byte, have, ok bool) {
	if rec.open < 0 {
		if len(rules) == 0 {
			return nil, false, true
		}
		e := encoder{}
		encodeArray(&e, "", k, rules, "    ")
		return e.buf, true, len(e.problems) == 0
	}
	arr, ok = patchList(p, k, rec, old, rules, "    ")
	return arr, len(rules) > 0, ok
}

// patchList writes rules over the array rec records, of which old are
// the rules decoded without a problem; indent is the indentation of a
// rule when the array had none.
func patchList[T any](p *patcher, k *kind[T], rec *listRec, old, rules []T, indent string) ([]byte, bool) {
	c, ok := p.split(rec.open)
	if !ok || len(c.items) != len(rec.elems) {
		return nil, false
	}
	// The candidates: the previous rules without a problem, by identity,
	// in document order.
	type cand struct {
		item int // index in c.items
		rule *T
		used bool
	}
	cands := make([]cand, 0, len(old))
	for i, el := range rec.elems {
		if el.ok {
			cands = append(cands, cand{item: i, rule: &old[len(cands)]})
		}
	}
	if len(cands) != len(old) {
		return nil, false
	}
	groups := make(map[string][]int, len(cands))
	for i := range cands {
		id := k.identity(cands[i].rule)
		groups[id] = append(groups[id], i)
	}
	ids := make([]string, len(rules))
	match := make([]int, len(rules))
	for j := range rules {
		ids[j] = k.identity(&rules[j])
		match[j] = -1
	}
	// Equal rules first, then the rest of a group in order.
	for j := range rules {
		for _, ci := range groups[ids[j]] {
			if !cands[ci].used && k.equal(cands[ci].rule, &rules[j]) {
				cands[ci].used = true
				match[j] = ci
				break
			}
		}
	}
	for j := range rules {
		if match[j] >= 0 {
			continue
		}
		for _, ci := range groups[ids[j]] {
			if !cands[ci].used {
				cands[ci].used = true
				match[j] = ci
				break
			}
		}
	}
	d := p.data
	lead := []byte(p.memberLead(c, "\n"+indent))
	parts := make([]part, len(rules))
	for j := range rules {
		if match[j] < 0 {
			parts[j] = part{lead: lead, body: fresh(p, k, &rules[j])}
			continue
		}
		ci := cands[match[j]]
		it := c.items[ci.item]
		tr := c.trail(ci.item)
		parts[j] = part{lead: d[it.lead:it.start], body: d[it.start:it.end], trail: d[tr[0]:tr[1]]}
		if !k.equal(ci.rule, &rules[j]) {
			parts[j].body = patchRule(p, k, it.start, &rules[j])
		}
	}
	ct := c.closingText()
	closing := d[ct[0]:ct[1]]
	if len(c.items) == 0 && len(rules) > 0 {
		closing = []byte("\n" + indent[2:])
	}
	return join('[', parts, closing, ']'), true
}

// patchRule writes the changed rule r over the rule object at start:
//
//   - a field whose value decodes as r's is kept as it is (null included);
//     another field of the rule gets r's value; a field r has and the
//     object lacks is added (when it is not the default);
//   - the dashboard's entity fields (id, app, ip, port, gmtCreate,
//     gmtModified), regex and any other field the decoder accepts and
//     ignores are kept, except legacy fields and parsedHotItems, which
//     would describe the old rule;
//   - a dashboard entity keeps its {"rule": {…}} wrapper, the rule inside
//     patched so, and the copies beside it updated.
//
// When the result does not decode to r, it is the entity fields with
// r as Encode writes it (inside the wrapper if there was one), and if
// that fails too, r as Encode writes it.
func patchRule[T any](p *patcher, k *kind[T], start int, r *T) []byte {
	f := fresh(p, k, r)
	fc, ok := splitIn(f, 0)
	if !ok {
		return f
	}
	fv := make(map[string]item, len(fc.items))
	for _, it := range fc.items {
		fv[it.key] = it
	}
	c, ok := p.split(start)
	if !ok {
		return f
	}
	for _, keep := range []bool{true, false} {
		if out := patchObject(p, k, c, f, fc, fv, r, keep); out != nil && decodesTo(k, out, r) {
			return out
		}
	}
	return f
}

// patchObject is one try of patchRule: with keep, unchanged fields keep
// their text; without, only the entity fields (and the wrapper) are kept
// and the rule is Encode's.
func patchObject[T any](p *patcher, k *kind[T], c container, f []byte, fc container, fv map[string]item, r *T, keep bool) []byte {
	d := p.data
	inner := -1
	if k.object.wrapped {
		for i, it := range c.items {
			if it.key == "rule" && d[it.val] == '{' {
				inner = i
			}
		}
	}
	if inner < 0 {
		return patchFlat(p, k, c, f, fc, fv, r, keep, -1, nil)
	}
	body := f
	if keep {
		ic, ok := p.split(c.items[inner].val)
		if !ok {
			return nil
		}
		if body = patchFlat(p, k, ic, f, fc, fv, r, true, -1, nil); body == nil {
			return nil
		}
	}
	return patchFlat(p, k, c, f, fc, fv, r, keep, inner, body)
}

// patchFlat writes the members of object c: item inner (if >= 0) is the
// wrapper's "rule", whose value becomes innerBody, and the rule fields
// beside it are copies of the rule's; else the rule fields are the
// rule's own.
func patchFlat[T any](p *patcher, k *kind[T], c container, f []byte, fc container, fv map[string]item, r *T, keep bool, inner int, innerBody []byte) []byte {
	d := p.data
	o := k.object
	written := make([]bool, len(o.fields))
	parts := make([]part, 0, len(c.items)+len(fc.items))
	for i, it := range c.items {
		tr := c.trail(i)
		pt := part{lead: d[it.lead:it.start], body: d[it.start:it.end], trail: d[tr[0]:tr[1]]}
		replace := func(v []byte) {
			pt.body = append(slices.Clip(d[it.start:it.val]), v...)
		}
		fi := o.field([]byte(it.key))
		switch {
		case i == inner:
			replace(innerBody)
		case isEntityField(it.key):
		case !keep:
			continue
		case fi >= 0 && inner >= 0:
			// A copy beside the wrapped rule: kept while it agrees.
			if cp := *r; !apply(k, fi, d, it.val, &cp) || !k.equal(&cp, r) {
				v, ok := fv[it.key]
				if !ok {
					continue
				}
				replace(f[v.val:v.end])
			}
		case fi >= 0:
			written[fi] = true
			v, ok := fv[it.key]
			if !ok {
				continue
			}
			if a, b := k.defaults(), k.defaults(); !apply(k, fi, d, it.val, &a) || !apply(k, fi, f, v.val, &b) || !k.equal(&a, &b) {
				replace(f[v.val:v.end])
			}
		default:
			if ig := o.ignoredKey([]byte(it.key)); ig != nil && (ig.legacy != "" || ig.name == "parsedHotItems") {
				continue // describes the old rule
			}
		}
		parts = append(parts, pt)
	}
	if inner < 0 {
		lead := []byte(p.memberLead(c, ""))
		def := k.defaults()
		for _, it := range fc.items {
			fi := o.field([]byte(it.key))
			if fi < 0 || written[fi] {
				continue
			}
			if keep {
				if t := k.defaults(); apply(k, fi, f, it.val, &t) && k.equal(&t, &def) {
					continue // the default: leave it out
				}
			}
			parts = append(parts, part{lead: lead, body: f[it.start:it.end]})
		}
	}
	ct := c.closingText()
	return join('{', parts, d[ct[0]:ct[1]], '}')
}

// apply decodes the value at pos of data as field fi into t, and tells
// whether it decoded without a problem.
func apply[T any](k *kind[T], fi int, data []byte, pos int, t *T) bool {
	d := &decoder{scanner: scanner{data: data, pos: pos}, rule: -1}
	k.object.fields[fi].dec(d, t)
	return d.err == nil && len(d.problems) == 0
}

// decodesTo tells whether the rule object body decodes to r.
func decodesTo[T any](k *kind[T], body []byte, r *T) bool {
	doc := make([]byte, 0, len(body)+2)
	doc = append(append(append(doc, '['), body...), ']')
	d := &decoder{scanner: scanner{data: doc}, rule: -1}
	rules := k.read(d)
	d.end()
	return d.err == nil && len(d.problems) == 0 && len(rules) == 1 && k.equal(&rules[0], r)
}

func equalLists[T any](k *kind[T], a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !k.equal(&a[i], &b[i]) {
			return false
		}
	}
	return true
}

// Equality after decoding, and identities: what makes a rule of the new
// value the successor of a rule of the previous document. A rule's
// identity is its resource and limitApp plus what tells apart rules that
// coexist on one resource (flow: grade, strategy and refResource;
// circuit breaker: grade; hotspot: paramIdx and grade). Authority rules
// are matched by resource, system rules (which have none) by position.

func eq[T comparable](a, b *T) bool { return *a == *b }

func hotspotEqual(a, b *hotspot.Rule) bool {
	x, y := *a, *b
	x.ParamFlowItemList, y.ParamFlowItemList = nil, nil
	return reflect.DeepEqual(x, y) && slices.Equal(a.ParamFlowItemList, b.ParamFlowItemList)
}

func identity(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p) + 1
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(append(b, p...), 0)
	}
	return string(b)
}

func flowIdentity(r *flow.Rule) string {
	return identity(r.Resource, r.LimitApp, strconv.Itoa(int(r.Grade)), strconv.Itoa(int(r.Strategy)), r.RefResource)
}

func cbIdentity(r *circuitbreaker.Rule) string {
	return identity(r.Resource, r.LimitApp, strconv.Itoa(int(r.Grade)))
}

func hotspotIdentity(r *hotspot.Rule) string {
	return identity(r.Resource, r.LimitApp, strconv.Itoa(r.ParamIdx), strconv.Itoa(int(r.Grade)))
}
