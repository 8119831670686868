// Package schematest walks the fields of rule types for the tests that
// keep the converter's tables, its encoder and the engine's equality
// functions in step with the rule structs: a field added to a rule (or to
// a struct it nests, or to the element of a slice it holds) shows up here
// without anyone listing it.
package schematest

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"
)

// Leaf is one field of a rule that holds a value: nested structs and the
// element of slices are walked into.
type Leaf struct {
	Go   string // "ClusterConfig.FlowID", "ParamFlowItemList[0].Count"
	JSON string // "clusterConfig.flowId", "paramFlowItemList[0].count"
	path []int  // field indexes; -1 is element 0 of a slice
}

// Fill sets every leaf of the struct *ptr to a value of its own: strings,
// integers and floats distinct per leaf, booleans true, enums (integer
// types with a String method) a named value other than the zero value,
// slices one element. The values are not meant to be valid rules. Fill
// panics on a field of a kind it does not know (a map, a pointer), so
// that a test must be taught it.
func Fill(ptr any) {
	n := 0
	fill(reflect.ValueOf(ptr).Elem(), &n)
}

func fill(v reflect.Value, n *int) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), n)
		}
		return
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), n)
		return
	}
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		if names := named(v.Type()); names != nil {
			v.SetInt(names[*n%len(names)])
			return
		}
		v.SetInt(int64(100 + *n))
	case reflect.Float64:
		v.SetFloat(0.25 + float64(*n))
	default:
		panic(fmt.Sprintf("schematest: field of kind %s: teach Fill and Change its values", v.Kind()))
	}
}

// named returns the values of an enum type other than its zero value: the
// integers up to 200 whose String is a name ("QPS"), not the fallback
// ("Grade(7)"). It returns nil for a type without a String method.
func named(t reflect.Type) []int64 {
	if !t.Implements(reflect.TypeFor[fmt.Stringer]()) {
		return nil
	}
	var out []int64
	for i := int64(1); i <= 200; i++ {
		v := reflect.New(t).Elem()
		v.SetInt(i)
		if s := v.Interface().(fmt.Stringer).String(); !strings.HasSuffix(s, ")") {
			out = append(out, i)
		}
	}
	return out
}

// Leaves returns the leaves of the struct type T, in field order.
func Leaves[T any]() []Leaf {
	return leaves(reflect.TypeFor[T](), Leaf{})
}

func leaves(t reflect.Type, at Leaf) []Leaf {
	switch t.Kind() {
	case reflect.Struct:
		var out []Leaf
		for i := range t.NumField() {
			f := t.Field(i)
			next := Leaf{Go: join(at.Go, f.Name), JSON: join(at.JSON, JSONName(f.Name)), path: append(append([]int(nil), at.path...), i)}
			out = append(out, leaves(f.Type, next)...)
		}
		return out
	case reflect.Slice:
		next := Leaf{Go: at.Go + "[0]", JSON: at.JSON + "[0]", path: append(append([]int(nil), at.path...), -1)}
		return leaves(t.Elem(), next)
	}
	return []Leaf{at}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// Change sets leaf l of the struct *ptr, which Fill filled, to another
// value of its type (another name, for an enum).
func Change(ptr any, l Leaf) {
	v := reflect.ValueOf(ptr).Elem()
	for _, i := range l.path {
		if i < 0 {
			v = v.Index(0)
		} else {
			v = v.Field(i)
		}
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int64:
		if names := named(v.Type()); len(names) > 1 {
			for _, x := range names {
				if x != v.Int() {
					v.SetInt(x)
					return
				}
			}
		}
		v.SetInt(v.Int() + 1)
	case reflect.Float64:
		v.SetFloat(v.Float() + 1)
	default:
		panic(fmt.Sprintf("schematest: leaf %s of kind %s", l.Go, v.Kind()))
	}
}

// JSONName is the name Java's rule documents give the Go field name: the
// first word in lower case, initialisms of later words with only their
// first letter upper case ("HighestCPUUsage" → "highestCpuUsage",
// "FlowID" → "flowId", "QPS" → "qps").
func JSONName(goName string) string {
	r := []rune(goName)
	var words []string
	start := 0
	for i := 1; i < len(r); i++ {
		upper := unicode.IsUpper(r[i])
		// A word starts at an upper-case letter after a lower-case one, or
		// at the last upper-case letter of a run followed by a lower-case one.
		if upper && (!unicode.IsUpper(r[i-1]) || (i+1 < len(r) && unicode.IsLower(r[i+1]))) {
			words = append(words, string(r[start:i]))
			start = i
		}
	}
	words = append(words, string(r[start:]))
	var b strings.Builder
	for i, w := range words {
		w = strings.ToLower(w)
		if i > 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
	}
	return b.String()
}
