package converter

import (
	"strconv"
	"strings"
)

// fieldAt returns the offset of the key of the field at path (Validate's
// field path: "count", "clusterConfig.flowId", "paramFlowItemList[1].count")
// in the object at pos, a dashboard entity's rule inside its "rule" when
// wrapped; pos itself when the document does not hold the field (a rule
// refused for a field it leaves out is pointed at by its start).
func fieldAt(data []byte, pos int, path string, wrapped bool) int {
	s := scanner{data: data, pos: pos}
	if wrapped {
		if _, ok := s.member("rule"); !ok {
			return pos
		}
	}
	at := pos
	for seg := range strings.SplitSeq(path, ".") {
		name, index := seg, -1
		if i := strings.IndexByte(seg, '['); i >= 0 && strings.HasSuffix(seg, "]") {
			n, err := strconv.Atoi(seg[i+1 : len(seg)-1])
			if err != nil {
				return at
			}
			name, index = seg[:i], n
		}
		keyAt, ok := s.member(name)
		if !ok {
			return at
		}
		at = keyAt
		if index >= 0 {
			if !s.element(index) {
				return at
			}
			at = s.pos
		}
	}
	return at
}

// member moves from the object at pos to the value of its member name
// and returns where its key is; false when there is none (or the JSON is
// broken).
func (s *scanner) member(name string) (keyAt int, ok bool) {
	if s.peek() != '{' {
		return 0, false
	}
	s.pos++
	for first := true; s.next('}', first); first = false {
		k := s.pos
		key, ok := s.key()
		if !ok {
			return 0, false
		}
		if string(key) == name {
			return k, true
		}
		s.skip()
	}
	return 0, false
}

// element moves from the array at pos to its element i; false when it has
// none.
func (s *scanner) element(i int) bool {
	if s.peek() != '[' {
		return false
	}
	s.pos++
	for j := 0; s.next(']', j == 0); j++ {
		if j == i {
			s.peek()
			return true
		}
		s.skip()
	}
	return false
}

// nearest is the name among names closest to name, when a misspelling of
// it is likely (a letter missing, extra, changed or two swapped, in a
// longer name two): "cuont" is "count". "" when none is.
func nearest(name string, names []string) string {
	best, bestD := "", 3
	lower := strings.ToLower(name)
	for _, n := range names {
		d := osa(lower, strings.ToLower(n))
		limit := 1
		if len(n) >= 6 {
			limit = 2
		}
		if d <= limit && d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// osa is the optimal string alignment distance of a and b: insertions,
// deletions, substitutions and swaps of adjacent bytes.
func osa(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
