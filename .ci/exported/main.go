// Command exported counts the exported identifiers of the module's
// non-test Go files: package-level functions, types, variables and
// constants, and the methods of exported types. Packages under internal/
// and the module's tools are left out (users cannot import them). It
// prints a line per package (with -list, every identifier) and the total,
// and exits 1 when the total is over the limit given by -max.
//
//	go run ./.ci/exported -max 250
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	root := flag.String("root", ".", "module root")
	limit := flag.Int("max", 0, "fail when the total is over this (0: no limit)")
	list := flag.Bool("list", false, "print every exported identifier")
	flag.Parse()

	counts := map[string]int{}
	err := filepath.WalkDir(*root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != *root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				name == "testdata" || name == "internal" || name == "tools" || name == "examples") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		names, err := exportedNames(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(*root, filepath.Dir(path))
		counts[filepath.ToSlash(rel)] += len(names)
		if *list {
			for _, n := range names {
				fmt.Printf("     %s.%s\n", filepath.ToSlash(rel), n)
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "exported:", err)
		os.Exit(2)
	}
	pkgs := make([]string, 0, len(counts))
	total := 0
	for p, n := range counts {
		pkgs = append(pkgs, p)
		total += n
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		if counts[p] > 0 {
			fmt.Printf("%4d %s\n", counts[p], p)
		}
	}
	fmt.Printf("%4d exported identifiers in all", total)
	if *limit > 0 {
		fmt.Printf(" (limit %d)", *limit)
	}
	fmt.Println()
	if *limit > 0 && total > *limit {
		os.Exit(1)
	}
}

// exportedNames returns the exported identifiers declared in the file at
// path; a method is named Type.Method.
func exportedNames(path string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	if f.Name.Name == "main" {
		return nil, nil
	}
	var names []string
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				names = append(names, d.Name.Name)
			} else if recv, ok := receiverName(d.Recv); ok {
				names = append(names, recv+"."+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						names = append(names, s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if id.IsExported() {
							names = append(names, id.Name)
						}
					}
				}
			}
		}
	}
	return names, nil
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
