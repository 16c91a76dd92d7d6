package architecture

import (
	"bufio"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/northstar-mobility/mobilityops-knowledge/"

// layers reads the package table of ARCHITECTURE.md: package (relative to the module) to layer.
func layers(t *testing.T, root string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| `([a-z/]+)` \\| ([a-z]+) \\|")
	out := map[string]string{}
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if m := row.FindStringSubmatch(sc.Text()); m != nil {
			out[m[1]] = m[2]
		}
	}
	if len(out) == 0 {
		t.Fatal("ARCHITECTURE.md has no package table")
	}
	return out
}

// imports parses the non-test files of every package under shared/ and returns each package's
// imports of this module, both relative to the module.
func imports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(filepath.Join(root, "shared"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		for _, s := range f.Imports {
			p, _ := strconv.Unquote(s.Path.Value)
			if dep, ok := strings.CutPrefix(p, module); ok && !slices.Contains(out[pkg], dep) {
				out[pkg] = append(out[pkg], dep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// layerOf is the layer of pkg: its own row, else its nearest parent's (sidecar/sidecarconf is
// the sidecar's); knowledge/ is domain.
func layerOf(table map[string]string, pkg string) (string, string) {
	for p := pkg; p != "." && p != ""; p = filepath.ToSlash(filepath.Dir(p)) {
		if l, ok := table[p]; ok {
			return l, p
		}
	}
	if pkg == "knowledge" {
		return "domain", pkg
	}
	return "", ""
}

func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// allowed says which layers a layer may import.
var allowed = map[string][]string{
	"domain":      {"domain"},
	"service":     {"domain", "service", "store"},
	"adapter":     {"domain"},
	"composition": {"domain", "service", "adapter", "composition"},
}

func TestEveryPackageHasALayer(t *testing.T) {
	r := root(t)
	table := layers(t, r)
	for pkg := range imports(t, r) {
		if l, _ := layerOf(table, pkg); l == "" {
			t.Errorf("%s is not in ARCHITECTURE.md's package table", pkg)
		}
	}
	for pkg, l := range table {
		if _, ok := allowed[l]; !ok {
			t.Errorf("%s: unknown layer %q", pkg, l)
		}
		if _, err := os.Stat(filepath.Join(r, pkg)); err != nil {
			t.Errorf("ARCHITECTURE.md names %s, which does not exist", pkg)
		}
	}
}

func TestImportsFollowTheLayers(t *testing.T) {
	r := root(t)
	table := layers(t, r)
	for pkg, deps := range imports(t, r) {
		l, home := layerOf(table, pkg)
		for _, dep := range deps {
			dl, dhome := layerOf(table, dep)
			if dhome == home {
				continue // within one package's own tree
			}
			kind := dl
			if dhome == "shared/store" {
				kind = "store"
			}
			if !slices.Contains(allowed[l], kind) && !(kind == "store" && l == "composition") {
				t.Errorf("%s (%s) imports %s (%s)", pkg, l, dep, dl)
			}
		}
		if pkg == "shared/domain" && len(deps) > 0 {
			t.Errorf("shared/domain imports %v; it imports nothing of ours", deps)
		}
	}
}

// TestAPIDoesNotLinkTheStore: the API adapter reaches the services only through its own
// interfaces, so nothing behind them is linked into it.
func TestAPIDoesNotLinkTheStore(t *testing.T) {
	graph := imports(t, root(t))
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		for _, d := range graph[p] {
			walk(d)
		}
	}
	walk("shared/api")
	for _, p := range []string{"shared/store", "shared/status", "shared/indexsync"} {
		if seen[p] {
			t.Errorf("shared/api links %s", p)
		}
	}
}

// TestStatusAndSyncLinkNoBedrock: each function links only what it uses; only lookup runs the
// sidecar.
func TestStatusAndSyncLinkNoBedrock(t *testing.T) {
	r := root(t)
	for fn, want := range map[string]bool{"lookup": true, "status": false, "sync": false} {
		cmd := exec.Command("go", "list", "-deps", "./functions/"+fn)
		cmd.Dir = r
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", fn, err)
		}
		if got := strings.Contains(string(out), "service/bedrockagentruntime"); got != want {
			t.Errorf("functions/%s links bedrockagentruntime: %v, want %v", fn, got, want)
		}
	}
}
