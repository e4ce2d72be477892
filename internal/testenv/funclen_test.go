package testenv

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the most lines a function of the repository may span,
// from its func keyword to its closing brace (issues 25 and 38): a longer
// one no longer reads as a sequence of named steps.
const maxFuncLines = 80

// longFuncs reports the functions of a file spanning more than max lines,
// each as "DIR NAME (N lines)": declared functions by name (methods as
// Receiver.Name), function literals outside them (a package variable's) by
// position, since one inside a function is already counted in it.
func longFuncs(fset *token.FileSet, f *ast.File, dir string, max int) []string {
	var out []string
	span := func(n ast.Node) int { return fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1 }
	for _, decl := range f.Decls {
		if fd, ok := decl.(*ast.FuncDecl); ok {
			if n := span(fd); n > max {
				out = append(out, fmt.Sprintf("%s %s (%d lines)", dir, funcName(fd), n))
			}
			continue
		}
		ast.Inspect(decl, func(node ast.Node) bool {
			lit, ok := node.(*ast.FuncLit)
			if !ok {
				return true
			}
			if n := span(lit); n > max {
				out = append(out, fmt.Sprintf("%s func literal at %s (%d lines)", dir, fset.Position(lit.Pos()), n))
			}
			return false
		})
	}
	return out
}

// funcName is a declared function's name, a method's as Receiver.Name.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr: // generic receiver
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// No non-test function of the repository spans more than maxFuncLines
// lines.
func TestFunctionLength(t *testing.T) {
	root := RepoRoot(t)
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		for _, l := range longFuncs(fset, f, filepath.ToSlash(rel), maxFuncLines) {
			t.Errorf("%s: split it into named steps of at most %d lines", l, maxFuncLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 300 {
		t.Fatalf("parsed only %d non-test Go files under %s", files, root)
	}
}

// The check counts a function from its func keyword to its closing brace,
// names methods by receiver, and sees a package variable's literal.
func TestLongFuncs(t *testing.T) {
	body := func(name string, lines int) string {
		return name + " {\n" + strings.Repeat("\t_ = 0\n", lines-2) + "}\n"
	}
	src := "package p\n\ntype T[E any] struct{}\n\n" +
		body("func fits()", 80) + body("func tooLong()", 81) + body("func (t *T[E]) method()", 81) +
		"var v = " + body("func()", 81)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(longFuncs(fset, f, "p", 80), "\n")
	want := "p tooLong (81 lines)\np T.method (81 lines)\np func literal at p.go:247:9 (81 lines)"
	if got != want {
		t.Errorf("longFuncs:\n%s\nwant:\n%s", got, want)
	}
}
