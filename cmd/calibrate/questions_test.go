package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

func writeSet(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoad(t *testing.T) {
	t.Parallel()
	corpus, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	path := writeSet(t, "set.jsonl", `{"question": "the charging cable is stuck", "language": "en", "expect": "ev-charging", "id": "x1"}

{"question": "Das Ladekabel steckt fest, was tun?", "language": null, "expect": "ev-charging"}
{"question": "Wie alt muss man sein, um einen Transporter zu mieten?", "expect": null}
`)
	qs, err := load(path, corpus)
	if err != nil {
		t.Fatal(err)
	}
	want := []labelled{
		{Where: path + ":1", Question: "the charging cable is stuck", Language: "en", Expect: "ev-charging"},
		{Where: path + ":3", Question: "Das Ladekabel steckt fest, was tun?", Language: "de", Expect: "ev-charging"},
		{Where: path + ":4", Question: "Wie alt muss man sein, um einen Transporter zu mieten?", Language: "de"},
	}
	if len(qs) != len(want) {
		t.Fatalf("loaded %d questions, want %d: %+v", len(qs), len(want), qs)
	}
	for i := range want {
		if qs[i] != want[i] {
			t.Errorf("question %d: %+v, want %+v", i, qs[i], want[i])
		}
	}

	// The evaluation YAML: answerable questions expect their procedure, the others none.
	yamlPath := writeSet(t, "set.yaml", `- id: a
  language: en
  question: "customer's phone died and the car won't open"
  expect: access-failure
- id: b
  language: en
  question: "minimum age to rent a van"
  expect: none
  kind: near-domain
- id: c
  question: "Wie wird das Wetter morgen?"
  expect: none
`)
	qs, err = load(yamlPath, corpus)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 3 || qs[0].Expect != "access-failure" || qs[1].Expect != "" || qs[2].Expect != "" || qs[2].Language != "de" {
		t.Errorf("YAML set loaded as %+v", qs)
	}

	bad := []struct{ name, content, want string }{
		{"no expect", `{"question": "cable stuck", "language": "en"}`, "expect is required"},
		{"misspelt expect", `{"question": "cable stuck", "language": "en", "expcet": "ev-charging"}`, "expect is required"},
		{"empty expect", `{"question": "cable stuck", "language": "en", "expect": " "}`, "procedure id or null"},
		{"expect not a string", `{"question": "cable stuck", "language": "en", "expect": 3}`, "procedure id or null"},
		{"unknown procedure", `{"question": "cable stuck", "language": "en", "expect": "ev-charge"}`, `"ev-charge" is not a procedure of language en`},
		{"blank question", `{"question": " ", "language": "en", "expect": null}`, "question is required"},
		{"no question", `{"language": "en", "expect": null}`, "question is required"},
		{"too long", `{"question": "` + strings.Repeat("a", 2001) + `", "expect": null}`, "limit is 2000"},
		{"unsupported language", `{"question": "cable stuck", "language": "fr", "expect": null}`, "not supported"},
		{"not JSON", `{"question": "cable stuck",`, ":1:"},
	}
	for _, b := range bad {
		_, err := load(writeSet(t, "bad.jsonl", b.content+"\n"), corpus)
		if err == nil || !strings.Contains(err.Error(), b.want) || !strings.Contains(err.Error(), "bad.jsonl:1") {
			t.Errorf("%s: err %v, want one naming bad.jsonl:1 and %q", b.name, err, b.want)
		}
	}
	if _, err := load(writeSet(t, "set.csv", "a,b\n"), corpus); err == nil {
		t.Error("a .csv file was read as a set")
	}
}
