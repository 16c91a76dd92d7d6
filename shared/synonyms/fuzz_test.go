package synonyms_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/synonyms"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// FuzzParse checks that synonyms.Parse never panics, that every rule it accepts writes back to a line
// that parses to the same rule, and that the compiled matcher keeps its spans inside the question.
// The seeds are in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add("Handy, Smartphone\nphone died => low battery\n")
	f.Fuzz(func(t *testing.T, src string) {
		s, err := synonyms.Parse("fuzz.txt", strings.NewReader(src))
		if err != nil {
			if s != nil {
				t.Fatal("rules returned with an error")
			}
			if !strings.HasPrefix(err.Error(), "fuzz.txt:") {
				t.Fatalf("error without file and line: %v", err)
			}
			return
		}
		var lines []string
		for _, r := range s.Rules() {
			lines = append(lines, r.String())
		}
		again, err := synonyms.Parse("fuzz.txt", strings.NewReader(strings.Join(lines, "\n")))
		if err != nil {
			t.Fatalf("rules written back do not parse: %v\n%q", err, lines)
		}
		for i, r := range again.Rules() {
			if !slices.Equal(r.Terms, s.Rules()[i].Terms) || !slices.Equal(r.Targets, s.Rules()[i].Targets) {
				t.Fatalf("rule %d changed when written back: %q became %q", i, s.Rules()[i], r)
			}
		}
		de := textproc.New("de")
		m := s.Compile(de.Tokens)
		q := de.Tokens(src)
		for _, e := range m.Expand(q, nil, nil) {
			if e.Start < 0 || e.End > len(q) || e.Start >= e.End || len(e.Tokens) == 0 {
				t.Fatalf("expansion %+v outside %d tokens", e, len(q))
			}
		}
	})
}
