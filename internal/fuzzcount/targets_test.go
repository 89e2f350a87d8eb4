package fuzzcount_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryTargetCounts checks that every fuzz target of the module (func FuzzXxx(f
// *testing.F) in a _test.go file) calls fuzzcount.Add in its fuzz function: scripts/fuzz.sh's
// summary counts the inputs a target ran from those calls alone, and printed 0 for targets
// that lacked it.
func TestEveryTargetCounts(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	targets := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Fuzz") || fn.Body == nil {
				continue
			}
			targets++
			counted := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Add" {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "fuzzcount" {
						counted = true
					}
				}
				return !counted
			})
			if !counted {
				t.Errorf("%s: %s does not call fuzzcount.Add", path, fn.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if targets < 40 {
		t.Fatalf("found %d fuzz targets under %s, want the module's (at least 40)", targets, root)
	}
}
