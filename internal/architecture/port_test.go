package architecture

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// lookupService is the lookup service's package. Only composition imports it: a provider, the
// sidecar and a service import the port; the adapters that drive it (api, mcp) declare their
// interfaces over the domain's records (lookupRecords), and the store and the trace replay
// name a trace through those records too.
const (
	lookupService = "shared/retrieval"
	lookupRecords = "shared/lookup"
	providerPort  = "shared/port"
)

// lookupDrivers are the adapters that call the lookup service, through interfaces of their own
// over lookupRecords.
var lookupDrivers = []string{"shared/api", "shared/mcp"}

// portUsers import the provider port and never the lookup service: the providers, the sidecar
// and the services that call a provider.
var portUsers = []string{"shared/demo", "shared/ragcore", "shared/sidecar", "shared/status", "shared/indexsync"}

// adapterBreaks lists every import of an adapter by another adapter (a package's own
// subpackages excepted).
func adapterBreaks(table map[string]string, graph map[string][]string) []string {
	var out []string
	for pkg, deps := range graph {
		l, home := layerOf(table, pkg)
		if l != "adapter" {
			continue
		}
		for _, dep := range deps {
			if dl, dhome := layerOf(table, dep); dl == "adapter" && dhome != home {
				out = append(out, pkg+" (adapter) imports "+dep+" (adapter)")
			}
		}
	}
	slices.Sort(out)
	return out
}

// lookupServiceBreaks lists every import of the lookup service by a package other than its own
// tree and composition: a driver takes the request and the result from lookupRecords, anything
// else what it needs from the port.
func lookupServiceBreaks(table map[string]string, graph map[string][]string) []string {
	var out []string
	for pkg, deps := range graph {
		l, home := layerOf(table, pkg)
		if home == lookupService || l == "composition" {
			continue
		}
		instead := providerPort
		if slices.Contains(lookupDrivers, home) {
			instead = lookupRecords + " (the request and the result) through an interface of its own"
		}
		for _, dep := range deps {
			if _, dhome := layerOf(table, dep); dhome == lookupService {
				out = append(out, pkg+" imports the lookup service "+dep+"; it takes what it needs from "+instead)
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestNoAdapterImportsAnother(t *testing.T) {
	r := root(t)
	for _, b := range adapterBreaks(layers(t, r), imports(t, r)) {
		t.Error(b)
	}
}

// TestProvidersAndServicesUseThePort: demo, ragcore, the sidecar, status and indexsync name a
// query, a call or an error through shared/port, never through the lookup service; api and mcp
// name the lookup's request and result through shared/lookup; nothing but composition imports
// the lookup service.
func TestProvidersAndServicesUseThePort(t *testing.T) {
	r := root(t)
	graph := imports(t, r)
	for _, b := range lookupServiceBreaks(layers(t, r), graph) {
		t.Error(b)
	}
	for _, pkg := range portUsers {
		if !slices.Contains(graph[pkg], providerPort) {
			t.Errorf("%s does not import %s", pkg, providerPort)
		}
	}
	for _, pkg := range lookupDrivers {
		if !slices.Contains(graph[pkg], lookupRecords) {
			t.Errorf("%s does not import %s", pkg, lookupRecords)
		}
	}
	for _, pkg := range append([]string{providerPort, lookupRecords}, lookupDrivers...) {
		if _, ok := graph[pkg]; !ok {
			t.Errorf("%s does not exist; the rules name it", pkg)
		}
	}
}

// TestTheRulesCatchABreak runs the rules over a made-up graph that breaks each of them once, so
// that a rule that stops seeing breaks fails here rather than passing in silence.
func TestTheRulesCatchABreak(t *testing.T) {
	table := layers(t, root(t))
	graph := map[string][]string{
		"shared/demo":                {"shared/retrieval", "shared/port"},
		"shared/ragcore":             {"shared/demo", "shared/port"},
		"shared/status":              {"shared/retrieval", "shared/store"},
		"shared/indexsync":           {"shared/retrieval"},
		"shared/sidecar":             {"shared/retrieval"},
		"shared/sidecar/sidecarconf": {"shared/sidecar"}, // its own tree: allowed
		"shared/api":                 {"shared/retrieval"},
		"shared/mcp":                 {"shared/lookup"},
		"shared/wire/mcpwire":        {"shared/retrieval"}, // composition: allowed
		"shared/wire":                {"shared/retrieval", "shared/ragcore"},
		"shared/store":               {"shared/retrieval", "shared/lookup"},
		"shared/tracelog":            {"shared/retrieval"},
	}
	adapters := adapterBreaks(table, graph)
	if len(adapters) != 1 || !strings.HasPrefix(adapters[0], "shared/ragcore (adapter) imports shared/demo") {
		t.Errorf("adapter breaks %q, want ragcore importing demo only", adapters)
	}
	var breakers []string
	for _, b := range lookupServiceBreaks(table, graph) {
		breakers = append(breakers, strings.Fields(b)[0])
	}
	if want := []string{"shared/api", "shared/demo", "shared/indexsync", "shared/sidecar", "shared/status", "shared/store", "shared/tracelog"}; !slices.Equal(breakers, want) {
		t.Errorf("lookup service imported by %v, want %v", breakers, want)
	}
}

// TestEveryImplementationIsChecked: every type that implements a provider interface of the port
// (Retriever, Answerer, ManifestSyncer, HealthChecker, Verifier, Sidecar) checks at compile time
// each port interface it implements, `var _ port.Retriever = (*Provider)(nil)`, so that a change
// of the port breaks the build where the implementation is, not where it is wired. Named, which
// every part embeds, needs no check of its own.
func TestEveryImplementationIsChecked(t *testing.T) {
	r := root(t)
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}\t{{.Dir}}", "./...")
	cmd.Dir = r
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports, dirs := map[string]string{}, map[string]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimSpace(line), "\t")
		if len(f) != 3 {
			continue
		}
		exports[f[0]] = f[1]
		if strings.HasPrefix(f[0], module) {
			dirs[f[0]] = f[2]
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	portPkg, err := imp.Import(module + providerPort)
	if err != nil {
		t.Fatal(err)
	}
	ifaces := map[string]*types.Interface{}
	for _, name := range portPkg.Scope().Names() {
		if tn, ok := portPkg.Scope().Lookup(name).(*types.TypeName); ok && tn.Exported() && name != "Named" {
			if it, ok := tn.Type().Underlying().(*types.Interface); ok {
				ifaces[name] = it
			}
		}
	}
	provider := []string{"Retriever", "Answerer", "ManifestSyncer", "HealthChecker", "Verifier", "Sidecar"}
	for _, name := range provider {
		if ifaces[name] == nil {
			t.Fatalf("port.%s is not an interface of %s", name, providerPort)
		}
	}
	checked := 0
	for path, dir := range dirs {
		if path == module+providerPort {
			continue
		}
		files := parseDir(t, fset, dir)
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
		pkg, err := (&types.Config{Importer: imp}).Check(path, fset, files, info)
		if err != nil {
			t.Fatalf("type-check %s: %v", path, err)
		}
		have := map[string]bool{} // "T port.I" for every `var _ port.I = T value`
		for _, f := range files {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, s := range g.Specs {
					vs := s.(*ast.ValueSpec)
					if vs.Type == nil || len(vs.Values) != 1 || vs.Names[0].Name != "_" {
						continue
					}
					it, ok := info.Types[vs.Type].Type.(*types.Named)
					if !ok || it.Obj().Pkg() != portPkg {
						continue
					}
					have[typeName(info.Types[vs.Values[0]].Type)+" port."+it.Obj().Name()] = true
				}
			}
		}
		for _, name := range pkg.Scope().Names() {
			tn, ok := pkg.Scope().Lookup(name).(*types.TypeName)
			if !ok || types.IsInterface(tn.Type()) {
				continue
			}
			impl := func(it *types.Interface) bool {
				return types.Implements(tn.Type(), it) || types.Implements(types.NewPointer(tn.Type()), it)
			}
			if !slices.ContainsFunc(provider, func(n string) bool { return impl(ifaces[n]) }) {
				continue
			}
			for iname, it := range ifaces {
				if !impl(it) {
					continue
				}
				checked++
				if !have[tn.Name()+" port."+iname] {
					t.Errorf("%s.%s implements port.%s without a compile-time check (var _ port.%s = ...)",
						strings.TrimPrefix(path, module), tn.Name(), iname, iname)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no implementation of the port found: the test looks in the wrong place")
	}
}

// typeName is the name of a named type or of a pointer to one.
func typeName(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Name()
	}
	return ""
}

// parseDir parses the non-test Go files of a package's directory that the build uses.
func parseDir(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		path := filepath.Join(dir, name)
		if ok, err := build.Default.MatchFile(dir, name); err != nil || !ok {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}
