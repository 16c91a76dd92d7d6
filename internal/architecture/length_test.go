package architecture

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function may be, outside tests, in the module and in bench/:
// from its func keyword to its closing brace, its doc comment aside.
const maxFuncLines = 80

// longFunctions are the functions still longer than maxFuncLines, by file and name, with their
// length when they were listed. Each may shrink, never grow; one that fits is taken off the list
// (the test says so), until the list is empty.
var longFunctions = map[string]int{}

// funcLengths returns the length in lines of every function and method with a body in the
// non-test Go files under root, keyed "path name" (path relative to root; a method's name is
// Type.Method). It skips node_modules, testdata and hidden folders.
func funcLengths(t *testing.T, root string) map[string]int {
	t.Helper()
	out := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			out[filepath.ToSlash(rel)+" "+funcName(fd)] = fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// funcName is a function's name, or Type.Method for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
			continue
		case *ast.IndexExpr: // a generic type's method
			typ = x.X
			continue
		case *ast.IndexListExpr:
			typ = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}

// longBreaks lists the functions of lengths over maxFuncLines that long does not allow, those
// on the list that grew, and those on the list that fit now or are gone.
func longBreaks(lengths, long map[string]int) []string {
	var out []string
	for fn, n := range lengths {
		was, listed := long[fn]
		switch {
		case n > maxFuncLines && !listed:
			out = append(out, fmt.Sprintf("%s is %d lines, over %d: split it", fn, n, maxFuncLines))
		case listed && n > was:
			out = append(out, fmt.Sprintf("%s grew from %d to %d lines; it may only shrink, to %d", fn, was, n, maxFuncLines))
		case listed && n <= maxFuncLines:
			out = append(out, fmt.Sprintf("%s fits in %d lines now (%d): take it off longFunctions", fn, maxFuncLines, n))
		}
	}
	for fn := range long {
		if _, ok := lengths[fn]; !ok {
			out = append(out, fmt.Sprintf("%s is gone: take it off longFunctions", fn))
		}
	}
	slices.Sort(out)
	return out
}

// TestNoFunctionOver80Lines keeps every function of the module and of bench/ (tests aside) within
// maxFuncLines, but those on longFunctions, which may only shrink.
func TestNoFunctionOver80Lines(t *testing.T) {
	lengths := funcLengths(t, root(t))
	if _, ok := lengths["bench/cmd/compare/main.go measureSize"]; !ok {
		t.Fatal("bench/ was not read")
	}
	for _, b := range longBreaks(lengths, longFunctions) {
		t.Error(b)
	}
}

// TestTheLengthRuleCatchesABreak: a function over the limit, a listed one that grew, one that
// fits now and one that is gone are each reported; a listed one that shrank but still does not
// fit, and a short one, are not.
func TestTheLengthRuleCatchesABreak(t *testing.T) {
	lengths := map[string]int{"a.go long": 81, "b.go Grew": 120, "c.go Fits": 80, "d.go Shrank": 90, "e.go short": 12}
	long := map[string]int{"b.go Grew": 110, "c.go Fits": 95, "d.go Shrank": 99, "f.go Gone": 85}
	got := longBreaks(lengths, long)
	want := []string{"a.go long", "b.go Grew", "c.go Fits", "f.go Gone"}
	if len(got) != len(want) {
		t.Fatalf("reported %q, want one line for each of %q", got, want)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w+" ") {
			t.Errorf("line %d: %q, want one about %s", i, got[i], w)
		}
	}
}
