// Command exported counts the exported identifiers of the module's
// non-test Go files: package-level functions, types, variables and
// constants, and the methods of exported types. Packages under internal/,
// the examples and the module's tools are left out (users cannot import
// them, or do not).
//
// It prints two figures: every exported identifier, and those a user
// calls or names. The second leaves out exactly two kinds of methods,
// which exist to satisfy an interface that the library itself (or the
// standard library) calls, and which a user reaches through that
// interface (a Readable over a Source, fmt over a Stringer, errors.Is
// over an error) rather than by name; they are part of a type's contract,
// not surface of their own:
//
//   - on a backend's source type, the methods that implement package
//     datasource's contracts, which the Readable, the Writable and the
//     library's tools call through interfaces. A backend's source type is
//     an exported type, in a package that imports package datasource,
//     that has the methods of datasource.Source (Read and Close). The
//     methods left out are those named by the interfaces declared in
//     package datasource's non-test files, exported or not (read from
//     the source: Source, Watcher, Sink, Registry, and the Overlay of
//     WithOverlay), and the two optional methods its documentation
//     ("Implementing a backend") specifies for backends, Overlays and
//     Delete, which the library's tools and its conformance suite reach
//     through interfaces of their own;
//   - on any type, the methods of the standard library's interfaces, with
//     their signature: Error() string (error), Unwrap() error and
//     Unwrap() []error, Is(error) bool and As(any) bool (package errors),
//     String() string and GoString() string (fmt.Stringer,
//     fmt.GoStringer), Format(fmt.State, rune) (fmt.Formatter),
//     MarshalJSON() ([]byte, error), UnmarshalJSON([]byte) error,
//     MarshalText() ([]byte, error) and UnmarshalText([]byte) error
//     (encoding/json, encoding).
//
// Everything else counts in both figures: every function, type, variable
// and constant, and every other method, including methods that implement
// an interface of another contract (cluster/redis's TokenService.Budget,
// which core calls through cluster.TokenService).
//
// It prints a line per package (both figures) and the totals; with -list,
// every identifier, those left out of the second figure marked "-" with
// the reason. It exits 1 when the total is over -max, or the figure of
// identifiers users call is over -max-calls (0: no limit).
//
//	go run ./.ci/exported -max-calls 250
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// module is the module path, to recognise imports of package datasource.
const module = "github.com/bulwark-go/bulwark"

// backendOptional are the methods that package datasource's documentation
// ("Implementing a backend") specifies for a backend besides its
// interfaces; tools reach them through interfaces of their own.
var backendOptional = []string{"Overlays", "Delete"}

// standard maps the name of a standard library interface's method to its
// signatures (as go/types prints a function type) and the interface.
var standard = map[string]struct {
	sigs []string
	why  string
}{
	"Error":         {[]string{"func() string"}, "error"},
	"Unwrap":        {[]string{"func() error", "func() []error"}, "errors.Unwrap"},
	"Is":            {[]string{"func(error) bool"}, "errors.Is"},
	"As":            {[]string{"func(any) bool", "func(interface{}) bool"}, "errors.As"},
	"String":        {[]string{"func() string"}, "fmt.Stringer"},
	"GoString":      {[]string{"func() string"}, "fmt.GoStringer"},
	"Format":        {[]string{"func(fmt.State, rune)"}, "fmt.Formatter"},
	"MarshalJSON":   {[]string{"func() ([]byte, error)"}, "json.Marshaler"},
	"UnmarshalJSON": {[]string{"func([]byte) error"}, "json.Unmarshaler"},
	"MarshalText":   {[]string{"func() ([]byte, error)"}, "encoding.TextMarshaler"},
	"UnmarshalText": {[]string{"func([]byte) error"}, "encoding.TextUnmarshaler"},
}

// ident is one exported identifier; a method is named Type.Method.
type ident struct {
	name string
	recv string        // the receiver type's name, for a method
	fn   *ast.FuncDecl // for a method
	left string        // why it is left out of the users-call figure; "" if not
}

// pkg is the exported identifiers of one package directory.
type pkg struct {
	rel     string
	dir     string
	names   []*ident
	imports map[string]bool
}

func main() {
	root := flag.String("root", ".", "module root")
	limit := flag.Int("max", 0, "fail when the total is over this (0: no limit)")
	limitCalls := flag.Int("max-calls", 0, "fail when the figure of identifiers users call is over this (0: no limit)")
	list := flag.Bool("list", false, "print every exported identifier")
	flag.Parse()

	pkgs, err := load(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "exported:", err)
		os.Exit(2)
	}
	contract := datasourceMethods(pkgs["datasource"])
	total, calls := 0, 0
	rels := make([]string, 0, len(pkgs))
	for rel := range pkgs {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	var lines []string
	for _, rel := range rels {
		p := pkgs[rel]
		classify(p, contract)
		n := 0
		for _, id := range p.names {
			if id.left == "" {
				n++
			}
			if *list {
				if id.left == "" {
					fmt.Printf("     %s.%s\n", rel, id.name)
				} else {
					fmt.Printf("   - %s.%s (%s)\n", rel, id.name, id.left)
				}
			}
		}
		total += len(p.names)
		calls += n
		if len(p.names) > 0 {
			lines = append(lines, fmt.Sprintf("%4d %4d %s", len(p.names), n, rel))
		}
	}
	fmt.Println(" all call package")
	for _, l := range lines {
		fmt.Println(l)
	}
	fmt.Printf("%4d exported identifiers in all", total)
	if *limit > 0 {
		fmt.Printf(" (limit %d)", *limit)
	}
	fmt.Println()
	fmt.Printf("%4d of them users call or name", calls)
	if *limitCalls > 0 {
		fmt.Printf(" (limit %d)", *limitCalls)
	}
	fmt.Println()
	if (*limit > 0 && total > *limit) || (*limitCalls > 0 && calls > *limitCalls) {
		os.Exit(1)
	}
}

// load parses the non-test files of every importable package under root.
func load(root string) (map[string]*pkg, error) {
	pkgs := map[string]*pkg{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				name == "testdata" || name == "internal" || name == "tools" || name == "examples") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		p := pkgs[rel]
		if p == nil {
			p = &pkg{rel: rel, dir: filepath.Dir(path), imports: map[string]bool{}}
			pkgs[rel] = p
		}
		for _, imp := range f.Imports {
			if s, err := strconv.Unquote(imp.Path.Value); err == nil {
				p.imports[s] = true
			}
		}
		p.names = append(p.names, exportedNames(f)...)
		return nil
	})
	return pkgs, err
}

// exportedNames returns the exported identifiers declared in f.
func exportedNames(f *ast.File) []*ident {
	var names []*ident
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				names = append(names, &ident{name: d.Name.Name})
			} else if recv, ok := receiverName(d.Recv); ok {
				names = append(names, &ident{name: recv + "." + d.Name.Name, recv: recv, fn: d})
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						names = append(names, &ident{name: s.Name.Name})
					}
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if id.IsExported() {
							names = append(names, &ident{name: id.Name})
						}
					}
				}
			}
		}
	}
	return names
}

// datasourceMethods returns the names of the methods of the interfaces
// declared in package datasource (exported or not), with those of the
// interfaces they embed, and the optional methods of a backend.
func datasourceMethods(p *pkg) map[string]bool {
	methods := map[string]bool{}
	for _, m := range backendOptional {
		methods[m] = true
	}
	if p == nil {
		return methods
	}
	// Parse the package again for its interfaces: exportedNames keeps no
	// unexported declaration.
	ifaces := map[string]*ast.InterfaceType{}
	dir := p.dir
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, decl := range f.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok {
				for _, spec := range gd.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok {
						if it, ok := ts.Type.(*ast.InterfaceType); ok {
							ifaces[ts.Name.Name] = it
						}
					}
				}
			}
		}
	}
	var add func(it *ast.InterfaceType)
	add = func(it *ast.InterfaceType) {
		for _, m := range it.Methods.List {
			if _, ok := m.Type.(*ast.FuncType); ok {
				for _, n := range m.Names {
					methods[n.Name] = true
				}
			} else if id, ok := m.Type.(*ast.Ident); ok && ifaces[id.Name] != nil {
				add(ifaces[id.Name])
			}
		}
	}
	for _, it := range ifaces {
		add(it)
	}
	return methods
}

// classify marks the identifiers of p that the users-call figure leaves
// out (see the command's documentation).
func classify(p *pkg, contract map[string]bool) {
	sources := map[string]bool{} // the package's backend source types
	if p.imports[module+"/datasource"] {
		has := map[string]map[string]bool{}
		for _, id := range p.names {
			if id.fn != nil {
				if has[id.recv] == nil {
					has[id.recv] = map[string]bool{}
				}
				has[id.recv][id.fn.Name.Name] = true
			}
		}
		for recv, ms := range has {
			sources[recv] = ms["Read"] && ms["Close"]
		}
	}
	for _, id := range p.names {
		if id.fn == nil {
			continue
		}
		m := id.fn.Name.Name
		if s, ok := standard[m]; ok {
			sig := signature(id.fn.Type)
			for _, want := range s.sigs {
				if sig == want {
					id.left = "standard: " + s.why
				}
			}
		}
		if id.left == "" && sources[id.recv] && contract[m] {
			id.left = "backend: datasource contract"
		}
	}
}

// signature returns a function type as go/types prints it, without the
// names of its parameters and results: "func(error) bool".
func signature(ft *ast.FuncType) string {
	fields := func(fl *ast.FieldList) []string {
		var out []string
		if fl == nil {
			return nil
		}
		for _, f := range fl.List {
			t := types.ExprString(f.Type)
			for range max(len(f.Names), 1) {
				out = append(out, t)
			}
		}
		return out
	}
	sig := "func(" + strings.Join(fields(ft.Params), ", ") + ")"
	switch res := fields(ft.Results); len(res) {
	case 0:
	case 1:
		sig += " " + res[0]
	default:
		sig += " (" + strings.Join(res, ", ") + ")"
	}
	return sig
}

// receiverName returns the name of a method's receiver type and whether it
// is exported.
func receiverName(recv *ast.FieldList) (string, bool) {
	t := recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name, x.IsExported()
		default:
			return "", false
		}
	}
}
