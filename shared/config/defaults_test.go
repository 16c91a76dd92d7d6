package config

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestOperationsTableShowsTheDefaults reads the configuration table of docs/operations.md and
// compares each variable's documented default with the one named in defaults.go.
func TestOperationsTableShowsTheDefaults(t *testing.T) {
	want := Defaults()
	documented := operationsDefaults(t)
	for name, def := range want {
		if got, ok := documented[name]; !ok {
			t.Errorf("docs/operations.md: %s has no default in the configuration table, want `%s`", name, def)
		} else if got != def {
			t.Errorf("docs/operations.md: %s defaults to `%s`, defaults.go to %q", name, got, def)
		}
	}
}

// operationsDefaults maps each variable of the configuration table to the first code span of its
// default cell; a row naming several variables gives them the cell's code spans in order.
func operationsDefaults(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	code := regexp.MustCompile("`([^`]*)`")
	out := map[string]string{}
	in := false
	for line := range strings.Lines(string(raw)) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "| name | meaning | default |"):
			in = true
			continue
		case in && !strings.HasPrefix(line, "|"):
			return out
		case !in || strings.HasPrefix(line, "|---"):
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 5 {
			continue
		}
		names, defs := code.FindAllStringSubmatch(cells[1], -1), code.FindAllStringSubmatch(cells[3], -1)
		for i := 0; i < len(names) && i < len(defs); i++ {
			out[names[i][1]] = defs[i][1]
		}
	}
	if !in {
		t.Fatal("docs/operations.md has no configuration table (| name | meaning | default | ...)")
	}
	return out
}
