package lexical

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestQuestionKinds(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want AnswerKinds
	}{
		{"how long does the field team have to collect it", AskDeadline},
		{"Wie oft müssen wir bei einem großen Ausfall Updates rausgeben", AskFrequency},
		{"who do I call when the app is down", AskContact},
		{"jockey wants to take his girlfriend along, ok?", AskPermission},
		{"Jockey will beim Bäcker halten, geht das klar?", AskPermission},
		{"wie viel kostet die Reinigung", AskAmount},
		{"techniker soll nen stromer mit 4 % einsammeln, wie viel zeit hat er dafür", AskDeadline},
		{"customer's car won't open", 0},
		{"whoever parked there", 0}, // "who" only as a whole word
	} {
		if got := QuestionKinds(tc.q); got != tc.want {
			t.Errorf("%q: kinds %b, want %b", tc.q, got, tc.want)
		}
	}
}

// QuestionKinds looks cues up by a question's words; it must find what searching the question
// for every cue finds, on every question of the evaluation sets and on cues at the edges.
func TestQuestionKindsMatchesAScanForEveryCue(t *testing.T) {
	scan := func(question string) AnswerKinds {
		q := " " + strings.ToLower(question) + " "
		var k AnswerKinds
		for _, c := range answerCues {
			for _, cue := range c.cues {
				for i := 0; ; {
					j := strings.Index(q[i:], cue)
					if j < 0 {
						break
					}
					at, end := i+j, i+j+len(cue)
					if !isWordByte(q[at-1]) && (!isWordByte(q[end]) || !isWordByte(cue[len(cue)-1])) {
						k |= c.kind
						break
					}
					i = at + 1
				}
			}
		}
		return k
	}
	questions := []string{"who", "Who?", "ok?", "is that ok?!", "whoever", "kostet", "wie lange?", "", "frist.", "how  long"}
	files, err := filepath.Glob("../../eval/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no evaluation sets: %v", err)
	}
	re := regexp.MustCompile(`(?m)^\s*question:\s*(.+)$`)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(raw), -1) {
			questions = append(questions, strings.Trim(m[1], `"'`))
		}
	}
	for _, q := range questions {
		if got, want := QuestionKinds(q), scan(q); got != want {
			t.Errorf("%q: kinds %b, a scan for every cue finds %b", q, got, want)
		}
	}
}

// corpusSentences are the sentences of every embedded procedure's sections, both languages.
func corpusSentences(tb testing.TB) []string {
	tb.Helper()
	idx := embedded(tb)
	var out []string
	for _, lang := range []string{"en", "de"} {
		l := idx.Lang(lang)
		for p := range l.Passages {
			_, sec := l.Doc(p)
			out = append(out, Sentences(sec.Content)...)
		}
	}
	return out
}

// BenchmarkKindsOf judges every sentence of the embedded corpus for every kind, what Focus and
// /ask's excerpts do the first time a passage's sentences are asked for a kind.
func BenchmarkKindsOf(b *testing.B) {
	sentences := corpusSentences(b)
	all := AskDeadline | AskFrequency | AskAmount | AskContact | AskPermission | AskThreshold
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range sentences {
			kindsOf(s, all)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(sentences)), "ns/sentence")
}
