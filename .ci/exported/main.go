// Command exported counts the exported identifiers of the module's
// non-test Go files: package-level functions, types, variables and
// constants, and the methods of exported types. Packages under internal/
// and the module's tools are left out (users cannot import them). It
// prints a line per package and the total, and exits 1 when the total is
// over the limit given by -max.
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
		n, err := countFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(*root, filepath.Dir(path))
		counts[filepath.ToSlash(rel)] += n
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

func countFile(path string) (int, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return 0, err
	}
	if f.Name.Name == "main" {
		return 0, nil
	}
	n := 0
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil || receiverExported(d.Recv) {
				n++
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						n++
					}
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if id.IsExported() {
							n++
						}
					}
				}
			}
		}
	}
	return n, nil
}

func receiverExported(recv *ast.FieldList) bool {
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
			return x.IsExported()
		default:
			return false
		}
	}
}
