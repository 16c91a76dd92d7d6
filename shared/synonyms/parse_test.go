package synonyms

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParseReadsBothKindsOfRule(t *testing.T) {
	src := "\ufeff# operators' words\n" +
		"\n" +
		"Handy,  Smartphone ,mobile   phone\r\n" +
		"phone died, dead phone => low battery, battery # a comment after a rule\n" +
		"won't open, can’t get in => unlock\n" +
		"e-flitzer => elektrofahrzeug"
	s, err := Parse("en/operators.txt", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{
		{Source: "en/operators.txt:3", Terms: []string{"Handy", "Smartphone", "mobile phone"}},
		{Source: "en/operators.txt:4", Terms: []string{"phone died", "dead phone"}, Targets: []string{"low battery", "battery"}},
		{Source: "en/operators.txt:5", Terms: []string{"won't open", "can’t get in"}, Targets: []string{"unlock"}},
		{Source: "en/operators.txt:6", Terms: []string{"e-flitzer"}, Targets: []string{"elektrofahrzeug"}},
	}
	got := s.Rules()
	if len(got) != len(want) {
		t.Fatalf("%d rules, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].Source != want[i].Source || !slices.Equal(got[i].Terms, want[i].Terms) || !slices.Equal(got[i].Targets, want[i].Targets) {
			t.Errorf("rule %d = %#v, want %#v", i, got[i], want[i])
		}
	}
	if got[0].Mapping() || !got[1].Mapping() {
		t.Error("Mapping() wrong")
	}
	if got[1].String() != "phone died, dead phone => low battery, battery" {
		t.Errorf("String() = %q", got[1].String())
	}
}

func TestParseNamesFileAndLineOfEveryError(t *testing.T) {
	long := strings.Repeat("a", MaxTermBytes+1)
	many := strings.TrimSuffix(strings.Repeat("w, ", MaxTermsPerRule+1), ", ")
	for _, tc := range []struct {
		name, line, want string
	}{
		{"empty term before =>", "a, , b => c", `empty term before "=>"`},
		{"empty left side", " => c", `empty term before "=>"`},
		{"empty term after =>", "a => c,", `empty term after "=>"`},
		{"empty right side", "a => # nothing", `empty term after "=>"`},
		{"empty equivalent term", "a,,b", "empty term"},
		{"trailing comma", "a, b,", "empty term"},
		{"=> twice", "a => b => c", `"=>" more than once`},
		{"one term no mapping", "handy", `one term "handy" and no "=>"`},
		{"punctuation", "car!, auto", `character '!' is not a letter, digit, space, hyphen or apostrophe`},
		{"dot", "z.B., zum Beispiel", `character '.'`},
		{"parenthesis", "Handy (ugs.), Mobiltelefon", `character '('`},
		{"slash", "a/b, c", `character '/'`},
		{"equals alone", "a = b, c", `character '='`},
		{"no letter", "--, car", `term "--" has no letter or digit`},
		{"over-long term", long + ", b", fmt.Sprintf("longer than %d bytes", MaxTermBytes)},
		{"too many terms", many, fmt.Sprintf("more than %d terms in one rule", MaxTermsPerRule)},
		{"over-long line", strings.Repeat("a, ", MaxLineBytes/3+1), fmt.Sprintf("line longer than %d bytes", MaxLineBytes)},
		{"invalid UTF-8", "caf\xe9, coffee", "not valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "# header\ngood, fine\n" + tc.line + "\nok => fine\n"
			s, err := Parse("en/operators.txt", strings.NewReader(src))
			if err == nil {
				t.Fatalf("no error; rules %v", s.Rules())
			}
			if s != nil {
				t.Error("rules returned with an error")
			}
			if !strings.HasPrefix(err.Error(), "en/operators.txt:3: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want en/operators.txt:3: ...%s", err, tc.want)
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.File != "en/operators.txt" || pe.Line != 3 {
				t.Errorf("error %#v is not an *Error at line 3", err)
			}
		})
	}
}

func TestParseReportsEveryBadLine(t *testing.T) {
	_, err := Parse("de/operators.txt", strings.NewReader("a,\nok, fine\nb => c => d\nsolo\n"))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"de/operators.txt:1: empty term", `de/operators.txt:3: "=>" more than once`, "de/operators.txt:4: one term"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	var lines strings.Builder
	for range maxErrors + 10 {
		lines.WriteString("bad\n")
	}
	_, err = Parse("x.txt", strings.NewReader(lines.String()))
	if n := strings.Count(err.Error(), "\n") + 1; n != maxErrors {
		t.Errorf("%d errors reported, want the first %d", n, maxErrors)
	}
}

func TestParseBoundsTheRules(t *testing.T) {
	var b strings.Builder
	for i := range MaxRules + 1 {
		fmt.Fprintf(&b, "w%d, v%d\n", i, i)
	}
	_, err := Parse("big.txt", strings.NewReader(b.String()))
	want := fmt.Sprintf("big.txt:%d: more than %d rules", MaxRules+1, MaxRules)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
	s, err := Parse("ok.txt", strings.NewReader(strings.Join(strings.SplitAfterN(b.String(), "\n", MaxRules+1)[:MaxRules], "")))
	if err != nil || s.Len() != MaxRules {
		t.Fatalf("%d rules, %v", s.Len(), err)
	}
}

func TestParseAcceptsALineOfTheMaximumLength(t *testing.T) {
	line := "a, b #" + strings.Repeat("x", MaxLineBytes-6)
	if _, err := Parse("x.txt", strings.NewReader(line+"\r\nc, d\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse("x.txt", strings.NewReader(line+"x\n")); err == nil {
		t.Fatal("a line one byte too long passed")
	}
}

func TestMergeKeepsOrder(t *testing.T) {
	a, _ := Parse("a.txt", strings.NewReader("x, y\n"))
	b, _ := Parse("b.txt", strings.NewReader("p => q\n"))
	m := Merge(a, nil, b)
	if m.Len() != 2 || m.Rules()[0].Source != "a.txt:1" || m.Rules()[1].Source != "b.txt:1" {
		t.Fatalf("merged %v", m.Rules())
	}
	if got := m.Select(func(r Rule) bool { return strings.HasPrefix(r.Source, "b.txt:") }); got.Len() != 1 || got.Rules()[0].Source != "b.txt:1" {
		t.Errorf("selected %v", got.Rules())
	}
	var empty *Set
	if empty.Len() != 0 || empty.Compile(strings.Fields).Expand([]string{"x"}, nil, nil) != nil {
		t.Error("a nil set is not empty")
	}
}

func TestCheckTerm(t *testing.T) {
	for term, ok := range map[string]bool{
		"phone died": true, "won't open": true, "E-Flitzer": true, "12v": true, "Knöllchen": true,
		"": false, " a": false, "a  b": false, "z.B.": false, "--": false, strings.Repeat("x", MaxTermBytes+1): false,
	} {
		if err := CheckTerm(term); (err == nil) != ok {
			t.Errorf("CheckTerm(%q) = %v", term, err)
		}
	}
}
