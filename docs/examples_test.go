package docs_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// example is one shell example of the docs that calls the local API, and the output shown
// under it.
type example struct {
	file, command, shown string
}

// examples finds every ```sh block of README.md and docs/*.md whose command is a curl against
// the local API (127.0.0.1:3000), with the ```json block that follows it, if any. The other
// shell examples (make targets, sam, aws, the emulator) start long-running servers or need an
// AWS account or Docker; docs/operations.md says which.
func examples(t *testing.T) []example {
	t.Helper()
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../README.md")
	block := regexp.MustCompile("(?s)```sh\n(curl [^`]*?)```\n(?:```json\n(.*?)\n```)?")
	var out []example
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllStringSubmatch(string(raw), -1) {
			if strings.Contains(m[1], "127.0.0.1:3000") {
				out = append(out, example{file: f, command: m[1], shown: m[2]})
			}
		}
	}
	return out
}

// TestShellExamplesRunAsWritten runs every curl example of the docs against the real handler
// (the local API's, on the embedded corpus) and checks that it answers, and answers with the
// fields the docs show: a field that the output lost or gained fails the test.
func TestShellExamplesRunAsWritten(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is needed to run the docs' examples")
	}
	srv := httptest.NewServer(newService(t, nil).http)
	defer srv.Close()
	exs := examples(t)
	if len(exs) < 10 {
		t.Fatalf("%d curl examples found in the docs, want every route's", len(exs))
	}
	ids := map[string]string{} // invocation ids the docs show, by the real ones
	for _, ex := range exs {
		cmd := strings.ReplaceAll(ex.command, "http://127.0.0.1:3000", srv.URL)
		// A documented invocation id stands for the one the lookup above it returned.
		for shown, real := range ids {
			cmd = strings.ReplaceAll(cmd, shown, real)
		}
		out, err := exec.Command("bash", "-c", cmd).Output()
		if err != nil {
			t.Errorf("%s: %q failed: %v", ex.file, firstLine(ex.command), err)
			continue
		}
		if ex.shown == "" {
			continue
		}
		var got, want map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Errorf("%s: %q: the output is not a JSON object: %.200s", ex.file, firstLine(ex.command), out)
			continue
		}
		if err := json.Unmarshal([]byte(ex.shown), &want); err != nil {
			continue // an abridged output ("...": "...") is shown for reading, not compared
		}
		if id, ok := want["invocation_id"].(string); ok {
			if real, ok := got["invocation_id"].(string); ok {
				ids[id] = real
			}
		}
		if g, w := keys(got, ""), keys(want, ""); !slices.Equal(g, w) {
			t.Errorf("%s: %q: the fields differ from the docs:\n got  %v\n docs %v", ex.file, firstLine(ex.command), g, w)
		}
	}
}

// keys lists the paths of an object's fields, nested objects included, sorted (the first element
// of arrays stands for all).
func keys(v any, prefix string) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			out = append(out, prefix+k)
			out = append(out, keys(e, prefix+k+".")...)
		}
	case []any:
		if len(x) > 0 {
			out = append(out, keys(x[0], prefix)...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }
