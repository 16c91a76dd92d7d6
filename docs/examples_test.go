package docs_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// example is one shell example of the docs that calls the local API, and the output shown
// under it, with the kind of its block (json or text).
type example struct {
	file, command, kind, shown string
}

// examples finds every ```sh block of README.md and docs/*.md that calls the local API
// (127.0.0.1:3000) with curl, with the ```json or ```text block that follows it, if any. The
// other shell examples (make targets, sam, aws, the emulator) start long-running servers or need
// an AWS account or Docker; docs/operations.md says which.
func examples(t *testing.T) []example {
	t.Helper()
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../README.md")
	block := regexp.MustCompile("(?s)```sh\n([^`]*?)```\n(?:```(json|text)\n(.*?)\n```)?")
	var out []example
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllStringSubmatch(string(raw), -1) {
			if strings.Contains(m[1], "127.0.0.1:3000") && strings.Contains(m[1], "curl ") && !strings.Contains(m[1], "make ") {
				out = append(out, example{file: f, command: m[1], kind: m[2], shown: m[3]})
			}
		}
	}
	return out
}

// TestShellExamplesRunAsWritten runs every curl example of the docs, in the docs' order, against
// the real handler (the local API's, on the embedded corpus) and compares its output with the
// one the docs show: every field and every value (scores, evidence states, sources, answers),
// but for the values no two runs share (ids, times, latencies), which are compared by form. A
// stale example fails. An example that needs an id from an earlier call (an invocation) gets it
// from that call in its own commands.
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
	compared := 0
	for _, ex := range exs {
		cmd := strings.ReplaceAll(ex.command, "http://127.0.0.1:3000", srv.URL)
		out, err := exec.Command("bash", "-c", "set -eo pipefail\n"+cmd).Output()
		if err != nil {
			t.Errorf("%s: %q failed: %v", ex.file, firstLine(ex.command), err)
			continue
		}
		var diffs []string
		switch {
		case ex.shown == "":
			continue
		case ex.kind == "text" && strings.HasPrefix(ex.shown, "HTTP/"):
			diffs = compareHTTP(string(out), ex.shown)
		case ex.kind == "text":
			got, err := decode(out)
			if err != nil {
				t.Errorf("%s: %q: the output is not JSON: %.200s", ex.file, firstLine(ex.command), out)
				continue
			}
			diffs = compareSummary(got, ex.shown)
		default:
			diffs = compareJSON(out, []byte(ex.shown))
		}
		compared++
		if len(diffs) > 0 {
			t.Errorf("%s: %q: the output differs from the docs:\n%s\nthe output:\n%s", ex.file, firstLine(ex.command),
				strings.Join(diffs, "\n"), out)
		}
	}
	if compared < 10 {
		t.Errorf("%d examples' outputs compared, want every route's", compared)
	}
}

// compareJSON compares an output with the one shown: the same fields with the same values, but
// for volatile ones. An object shown with a "…" member is abridged: only the fields shown are
// compared.
func compareJSON(out, shown []byte) []string {
	got, err := decode(out)
	if err != nil {
		return []string{fmt.Sprintf("the output is not JSON: %v", err)}
	}
	want, err := decode(shown)
	if err != nil {
		return []string{fmt.Sprintf("the docs' output is not JSON: %v", err)}
	}
	var diffs []string
	diff("", got, want, &diffs)
	return diffs
}

// compareHTTP compares the output of curl -i with the one shown: the status line, every header
// shown, and the body.
func compareHTTP(out, shown string) []string {
	out = strings.ReplaceAll(out, "\r\n", "\n")
	gotHead, gotBody, _ := strings.Cut(out, "\n\n")
	wantHead, wantBody, _ := strings.Cut(shown, "\n\n")
	gotLines, wantLines := strings.Split(gotHead, "\n"), strings.Split(wantHead, "\n")
	var diffs []string
	if gotLines[0] != wantLines[0] {
		diffs = append(diffs, fmt.Sprintf("status %q, docs %q", gotLines[0], wantLines[0]))
	}
	for _, h := range wantLines[1:] {
		if !slices.ContainsFunc(gotLines[1:], func(g string) bool { return strings.EqualFold(g, h) }) {
			diffs = append(diffs, fmt.Sprintf("header %q missing", h))
		}
	}
	return append(diffs, compareJSON([]byte(gotBody), []byte(wantBody))...)
}

// compareSummary compares a lookup's output with the summary the docs show of it: a line with
// the evidence state, the assessment and the coverage, a line per evidence block (rank, source,
// layer, score, hit reasons), then the retrieval object.
func compareSummary(got any, shown string) []string {
	o, _ := got.(map[string]any)
	rel, _ := o["relevance"].(map[string]any)
	lines := []string{fmt.Sprintf("%v %v coverage=%v", o["evidence_state"], rel["assessment"], rel["coverage"])}
	blocks, _ := o["evidence_blocks"].([]any)
	for _, b := range blocks {
		b, _ := b.(map[string]any)
		score, _ := b["score"].(map[string]any)
		var reasons []string
		hits, _ := b["hit_reasons"].([]any)
		for _, h := range hits {
			reasons = append(reasons, fmt.Sprint(h))
		}
		lines = append(lines, fmt.Sprintf("%v %v %v %v %s", b["rank"], b["source"], b["retrieval_layer"], score["value"],
			strings.Join(reasons, ",")))
	}
	want := strings.Split(strings.TrimSpace(shown), "\n")
	var diffs []string
	if len(want) != len(lines)+1 {
		return []string{fmt.Sprintf("%d lines, the docs %d:\n%s", len(lines)+1, len(want), strings.Join(lines, "\n"))}
	}
	for i, l := range lines {
		if l != want[i] {
			diffs = append(diffs, fmt.Sprintf("line %d\n got  %s\n docs %s", i+1, l, want[i]))
		}
	}
	retrieval, _ := json.Marshal(o["retrieval"])
	return append(diffs, compareJSON(retrieval, []byte(want[len(want)-1]))...)
}

// decode decodes JSON with its numbers as written, so that 7.9612 is compared as the docs show it.
func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// volatile are the fields no two runs share, by the form their values must have.
var volatile = map[string]*regexp.Regexp{
	"invocation_id": regexp.MustCompile(`^[A-Z2-7]{26}$`),
	"created_at":    regexp.MustCompile(`^\d{4}-\d\d-\d\dT[0-9:.]+Z$`),
	"expires_at":    regexp.MustCompile(`^\d{4}-\d\d-\d\dT[0-9:.]+Z$`),
	"verified_at":   regexp.MustCompile(`^\d{4}-\d\d-\d\dT[0-9:.]+Z$`),
	"run_id":        regexp.MustCompile(`^(sync-\d{8}T\d{6}Z-[a-z2-7]{8}|n8n-run-.*)$`),
	"as_of":         regexp.MustCompile(`^\d{4}-\d\d-\d\d$`), // today, unless the request named the day
	"duration_ms":   regexp.MustCompile(`^[0-9.]+$`),
	"l0":            regexp.MustCompile(`^[0-9.]+$`), // latency_ms's; retrieval's l0 is an object
	"l1":            regexp.MustCompile(`^[0-9.]+$`),
	"total":         regexp.MustCompile(`^[0-9.]+$`),
}

// generatedID is a correlation id the service made up (a request without X-Correlation-Id).
var generatedID = regexp.MustCompile(`^[A-Z2-7]{26}$`)

func diff(path string, got, want any, diffs *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			*diffs = append(*diffs, fmt.Sprintf("%s: %v, docs an object", path, got))
			return
		}
		_, abridged := w["…"]
		if _, dots := w["..."]; dots {
			abridged = true
		}
		for k, wv := range w {
			if k == "…" || k == "..." {
				continue
			}
			gv, ok := g[k]
			switch {
			case !ok:
				*diffs = append(*diffs, fmt.Sprintf("%s.%s: missing", path, k))
			case volatile[k] != nil && isScalar(wv):
				if re := volatile[k]; !re.MatchString(fmt.Sprint(gv)) {
					*diffs = append(*diffs, fmt.Sprintf("%s.%s: %v is not of the form %s", path, k, gv, re))
				}
			case k == "correlation_id" && generatedID.MatchString(fmt.Sprint(wv)):
				if !generatedID.MatchString(fmt.Sprint(gv)) {
					*diffs = append(*diffs, fmt.Sprintf("%s.%s: %v, want a generated id", path, k, gv))
				}
			default:
				diff(path+"."+k, gv, wv, diffs)
			}
		}
		if !abridged {
			for k := range g {
				if _, ok := w[k]; !ok {
					*diffs = append(*diffs, fmt.Sprintf("%s.%s: not in the docs", path, k))
				}
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			*diffs = append(*diffs, fmt.Sprintf("%s: %s, docs %s", path, brief(got), brief(want)))
			return
		}
		for i := range w {
			diff(fmt.Sprintf("%s[%d]", path, i), g[i], w[i], diffs)
		}
	default:
		if !reflect.DeepEqual(got, want) {
			*diffs = append(*diffs, fmt.Sprintf("%s: %s, docs %s", path, brief(got), brief(want)))
		}
	}
}

func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

func brief(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }
