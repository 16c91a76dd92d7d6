package textproc

import (
	"math/rand/v2"
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

// corpusSentences are the sentences of every procedure of the embedded corpus, both languages,
// front matter and headings included.
func corpusSentences(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob("../../knowledge/procedures/*/*.md")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no procedures: %v", err)
	}
	var out []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, Sentences(string(raw))...)
	}
	return out
}

// BenchmarkKindsOf judges every sentence of the embedded corpus for every kind, what Focus and
// /ask's excerpts do the first time a passage's sentences are asked for a kind.
func BenchmarkKindsOf(b *testing.B) {
	sentences := corpusSentences(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range sentences {
			KindsOf(s, AllKinds)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(sentences)), "ns/sentence")
}

// answerPatterns are the regular expressions the answer scans of answerscan.go implement, kind by
// kind: the scans must decide what these match.
var answerPatterns = map[AnswerKinds]*regexp.Regexp{
	AskDeadline:   regexp.MustCompile(`(?i)\d+\s*(min|minutes?|hours?|h|days?|business days?|weeks?|minuten|stunden|std|tagen?|werktagen?|wochen?)\b|\b(within|at the latest|innerhalb|spätestens|binnen)\b`),
	AskFrequency:  regexp.MustCompile(`(?i)\b(every|each|alle|jede[nrs]?)\s+(\d+|day|hour|week|tag|stunde|woche)`),
	AskAmount:     regexp.MustCompile(`(?i)\d+([.,]\d+)?\s*(€|eur\b|euro)|€\s*\d+`),
	AskContact:    regexp.MustCompile(`(?i)\b(ext\.|extension|durchwahl)\s*\d+|\b(on-call|duty manager|bereitschaft|schichtleitung)\b`),
	AskPermission: regexp.MustCompile(`(?i)\b(not allowed|allowed|may not|must not|must never|never|prohibited|forbidden|only|nicht erlaubt|erlaubt|darf|dürfen|nie|niemals|verboten|untersagt|nur)\b`),
	AskThreshold:  regexp.MustCompile(`\d+\s*%`),
}

// patternKinds is what answerPatterns say a sentence states.
func patternKinds(s string) AnswerKinds {
	var k AnswerKinds
	for kind, re := range answerPatterns {
		if re.MatchString(s) {
			k |= kind
		}
	}
	return k
}

func checkAnswerScans(t *testing.T, s string) {
	t.Helper()
	want := patternKinds(s)
	if got := KindsOf(s, AllKinds); got != want {
		t.Fatalf("%q: scans find kinds %06b, the patterns %06b", s, got, want)
	}
	for kind := range answerPatterns {
		if got := kind.Answers(s); got != (want&kind != 0) {
			t.Fatalf("%q: Answers for kind %06b is %v", s, kind, got)
		}
	}
}

// answerFragments are pieces that generated strings are made of: the patterns' words and the
// characters at their edges (case, folding, spacing, digits, punctuation, invalid UTF-8).
var answerFragments = []string{
	"min", "minutes", "Minute", "hours", "H", "days", "business day", "business  days", "weeks",
	"Minuten", "stunden", "STD", "tage", "Tagen", "werktag", "wochen", "within", "at the latest",
	"innerhalb", "spätestens", "SPÄTESTENS", "ſpätestens", "binnen", "every", "each", "Alle",
	"jede", "jeden", "jeder", "jedes", "jedex", "day", "hour", "week", "tag", "stunde", "woche",
	"€", "eur", "EUR", "euro", "Euros", "ext.", "ext", "extension", "durchwahl", "on-call",
	"on call", "duty manager", "Bereitschaft", "schichtleitung", "not allowed", "allowed",
	"may not", "must not", "must never", "never", "prohibited", "forbidden", "only", "erlaubt",
	"darf", "dürfen", "DÜRFEN", "nie", "niemals", "verboten", "untersagt", "nur", "%",
	"0", "7", "12", "3.5", "4,25", ".", ",", " ", " ", "\t", "\n", "\v", "\f", "\r", "_", "-", "x",
	"a", "é", "ä", "ß", "K", "k", "ſ", "s", "\xff", "\xc3", "\xe2\x82", "(", ")", "?", "!",
}

func TestAnswerScansMatchTheirPatterns(t *testing.T) {
	for _, s := range corpusSentences(t) {
		checkAnswerScans(t, s)
	}
	for _, s := range []string{"", "5", "5 %", "5%", "every", "every ", "every 3", "€", "€ 4", "4€",
		"4 eur", "4 eur5", "4 euro5", "x12min", "12 minx", "ext.4", "ext 4", "_nur", "nur_", "önur",
		"nurö", "ſtd", "3 ſtd", "3 std_", "alle\t\ttage", "alle", "jeden\vtag", "Kinnerhalb"} {
		checkAnswerScans(t, s)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(8) {
			b.WriteString(answerFragments[rng.IntN(len(answerFragments))])
		}
		checkAnswerScans(t, b.String())
	}
}

func FuzzAnswerScans(f *testing.F) {
	for _, s := range answerFragments {
		f.Add(s)
	}
	f.Add("Up to 3 attempts, at least 30 seconds apart, are allowed.")
	f.Add("Statusmeldung alle 60 Minuten an die Schichtleitung (Durchwahl 4410).")
	f.Fuzz(func(t *testing.T, s string) { checkAnswerScans(t, s) })
}

// The kinds of a question do not depend on its case, and are those of the question as
// strings.ToLower lowers it: ASCII, long text, runes that lower to more bytes ("Ⱥ" to "ⱥ") or
// fewer ("İ" to "i"), invalid UTF-8 (each byte U+FFFD, three), questions lowered on the stack and
// longer ones.
func TestQuestionKindsIgnoreCase(t *testing.T) {
	long := strings.Repeat("How LONG until the Tow Truck comes? ", 12)
	for _, s := range []string{"", "How long until the TOW truck arrives?", long, "WIE LANGE dauert das, FÜR wen?", "ÄRGER",
		"İstanbul KEY", "Akku unter 10 Prozent, Kunde steht an der LADESÄULE", "\xffBAD\xc3", "ȺȺȺ",
		strings.Repeat("a", 254) + "Ⱥ", strings.Repeat("a", 253) + "Ⱥ", strings.Repeat("a", 255) + "Ä", strings.Repeat("Ä", 128),
		strings.Repeat("ȺB", 100), strings.Repeat("Ⱥ", 256) + " WIE LANGE", strings.Repeat("\xff", 500) + "WER zahlt",
		strings.Repeat("Wie lange dauert die ÜBERFÜHRUNG? ", 30)} {
		if got, want := QuestionKinds(s), QuestionKinds(strings.ToLower(s)); got != want {
			t.Errorf("QuestionKinds(%q) = %b, want %b as in lower case", s, got, want)
		}
		if got, want := QuestionKinds(s), questionKinds(strings.ToLower(s)); got != want {
			t.Errorf("QuestionKinds(%q) = %b, want %b, the kinds of strings.ToLower's", s, got, want)
		}
	}
	if QuestionKinds("HOW LONG DOES IT TAKE") != AskDeadline {
		t.Error("an upper-case question asks for no deadline")
	}
}

// BenchmarkQuestionKinds measures the cue scan of a question that starts with a capital, as
// most do.
func BenchmarkQuestionKinds(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		QuestionKinds("Customer's phone died and the car won't open, how long until someone can unlock it remotely?")
	}
}
