package textproc

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/synonyms"
)

func TestFoldMeetsUmlautSpellings(t *testing.T) {
	de := New("de")
	for _, pair := range [][2]string{
		{"Bußgeld", "Bussgeld"}, {"Schäden", "Schaeden"}, {"Größe", "Groesse"}, {"Überführung", "Ueberfuehrung"},
		{"LADESÄULE", "ladesaeule"},
	} {
		if a, b := de.Fold(pair[0]), de.Fold(pair[1]); a != b {
			t.Errorf("Fold(%q) = %q but Fold(%q) = %q", pair[0], a, pair[1], b)
		}
	}
	en := New("en")
	if got := en.Fold("Café Crème"); got != "cafe creme" {
		t.Errorf("English diacritics: %q", got)
	}
	if got := en.Fold("blue"); got != "blue" {
		t.Errorf("English keeps 'ue': %q", got)
	}
}

func TestTermsStemAndDropStopWords(t *testing.T) {
	en := New("en")
	if got, want := en.Terms("The scratches on the doors were photographed"), []string{"scratch", "door", "photograph"}; !slices.Equal(got, want) {
		t.Errorf("en terms %v, want %v", got, want)
	}
	if got := en.Terms("the car won't start"); !slices.Contains(got, "won") {
		t.Errorf("negation dropped: %v", got)
	}
	de := New("de")
	a, b := de.Terms("Die Schäden an den Autos"), de.Terms("Schaden am Auto")
	if !slices.Equal(a, b) {
		t.Errorf("German inflections do not meet: %v vs %v", a, b)
	}
	if got := de.Terms("Das Auto springt nicht an"); !slices.Contains(got, "nicht") {
		t.Errorf("German negation dropped: %v", got)
	}
}

func TestSplitterFindsCompoundParts(t *testing.T) {
	base := New("de")
	s := NewSplitter(base, "Die Scheibe ist kaputt. Der Akku ist leer. Die Bereitschaft hilft.")
	cases := map[string][]string{
		"windschutzscheibe":   {"scheibe"},
		"akkustand":           {"akku"},
		"bereitschaftsdienst": {"bereitschaft"},
		"kaputt":              nil,
	}
	for tok, want := range cases {
		got, _ := s.Split(base.Fold(tok))
		var stems []string
		for _, p := range got {
			stems = append(stems, base.Stem(p))
		}
		for _, w := range want {
			if !slices.Contains(stems, base.Stem(w)) {
				t.Errorf("Split(%q) = %v, want a part that stems like %q", tok, got, w)
			}
		}
		if want == nil && got != nil {
			t.Errorf("Split(%q) = %v, want nothing", tok, got)
		}
	}
	a := base.WithSplitter(s)
	if got := a.Terms("Windschutzscheibe"); !slices.Contains(got, a.Stem("scheibe")) {
		t.Errorf("analyzer does not emit compound parts: %v", got)
	}
}

func TestSupported(t *testing.T) {
	if !Supported("en") || !Supported("de") || Supported("fr") || Supported("EN") {
		t.Error("Supported is wrong")
	}
}

// boundedSplitter knows a few compound parts, so that tokens built from them keep a split busy.
func boundedSplitter() (*Analyzer, *Splitter) {
	base := New("de")
	return base, NewSplitter(base, "Schaden Kabel Ladung Scheibe Akku Reifen Fahrzeug Werkstatt Kunde Unfall Schlüssel Türen")
}

func TestSplitIgnoresTokensOverMaxSplitToken(t *testing.T) {
	base, s := boundedSplitter()
	fits := "werkstattsschlusselsfahrzeugsschadens"
	if len(fits) > MaxSplitToken || len(fits)+5 <= MaxSplitToken {
		t.Fatalf("MaxSplitToken is %d: adjust the test's tokens", MaxSplitToken)
	}
	if parts, complete := s.Split(fits); len(parts) == 0 || !complete {
		t.Fatalf("Split(%d bytes) = %v, %v: want a complete split", len(fits), parts, complete)
	}
	if parts, _ := s.Split(fits + "kabel"); parts != nil {
		t.Errorf("Split of a %d-byte token = %v, want none (over MaxSplitToken)", len(fits)+5, parts)
	}
	long := strings.Repeat("a", MaxStemToken+1)
	if got := base.Stem(long); got != long {
		t.Errorf("a token over MaxStemToken is stemmed: %q", got)
	}
}

// A split on a smaller budget gives the unbounded split's result or none, never another one, and
// never draws more than it was given.
func TestSplitBudgetGivesTheSameResultOrNone(t *testing.T) {
	_, s := boundedSplitter()
	toks := []string{"schadenskabel", "akkukabelschaden", "werkstattkundenreifen", "fahrzeugschlusselunfall",
		"reifenreifenreifenreifen", "kabelxakku", "unbekanntkabel", "akkuakkuakkuakkuakkuakkuakkuakkuakkuakku"}
	for _, tok := range toks {
		unbounded := 1 << 30
		want, wantComplete := s.splitBudget(tok, &unbounded)
		used := 1<<30 - unbounded
		if used > MaxSplitChecks {
			t.Errorf("%q needs %d checks, more than MaxSplitChecks", tok, used)
		}
		for budget := 0; budget <= used; budget++ {
			left := budget
			got, complete := s.splitBudget(tok, &left)
			if left < 0 {
				t.Errorf("%q on %d checks overdrew to %d", tok, budget, left)
			}
			if got != nil && (!slices.Equal(got, want) || complete != wantComplete) {
				t.Errorf("%q on %d checks = %v, %v; unbounded %v, %v", tok, budget, got, complete, want, wantComplete)
			}
			if budget == used && !slices.Equal(got, want) {
				t.Errorf("%q on exactly the checks it needs = %v, want %v", tok, got, want)
			}
		}
	}
}

func TestQuestionGroupsShareOneBudget(t *testing.T) {
	base, s := boundedSplitter()
	a := base.WithSplitter(s)
	parts := []string{"schaden", "kabel", "akku", "reifen", "fahrzeug", "werkstatt", "kunde", "unfall"}
	var words []string
	for i := range 200 {
		words = append(words, parts[i%8]+parts[i/8%8]+parts[i/64%8])
	}
	q := strings.Join(words, " ")
	all, bounded := a.Groups(q), a.QuestionGroups(q)
	if len(all) != len(bounded) {
		t.Fatalf("%d groups, %d bounded", len(all), len(bounded))
	}
	for i, g := range all {
		if len(g.Parts) == 0 {
			t.Fatalf("unbounded group %d (%s) has no parts", i, words[i])
		}
	}
	if len(bounded[0].Parts) == 0 {
		t.Error("the first word of a question lost its parts")
	}
	if last := bounded[len(bounded)-1]; len(last.Parts) != 0 {
		t.Errorf("the 200th compound still split (%v): the question's budget is not shared", last.Parts)
	}
	normal := "Ladekabel defekt, Akkustand niedrig, Kunde wartet an der Werkstatt; Ladekabel tauschen"
	if got, want := a.QuestionGroups(normal), a.Groups(normal); !reflect.DeepEqual(got, want) {
		t.Errorf("a normal question: QuestionGroups %v, Groups %v", got, want)
	}
	if g := a.QuestionGroups(normal); !reflect.DeepEqual(g[0], g[len(g)-2]) {
		t.Errorf("a repeated word got another group: %v vs %v", g[0], g[len(g)-2])
	}
}

func TestNormalizeFoldsLookAlikes(t *testing.T) {
	for in, want := range map[string]string{
		"\ufb01ne": "fine", "\uff44\uff41\uff4d\uff41\uff47\uff45": "damage", "dam\u00adage": "damage",
		"a\u200bb\u200cc\u200dd\u2060e\ufefff": "abcdef", "Scha\u0308den": "Schäden", "plain text": "plain text",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
		if a := New("de"); a.Fold(in) != a.Fold(want) {
			t.Errorf("Fold(%q) = %q, Fold(%q) = %q", in, a.Fold(in), want, a.Fold(want))
		}
	}
}

func TestSynonymAlternativesSkipStopWords(t *testing.T) {
	set, err := synonyms.Parse("en/test.txt", strings.NewReader("cant pay => does not pay the fine\n"))
	if err != nil {
		t.Fatal(err)
	}
	a := New("en")
	a = a.WithSynonyms(set.Compile(a.Tokens))
	g := a.Synonyms("he cant pay", a.Groups("he cant pay"))
	var alts []string
	for _, w := range g {
		for _, alt := range w.Alts {
			alts = append(alts, alt.Term)
		}
	}
	if !slices.Contains(alts, a.Stem("fine")) {
		t.Errorf("a stop word ended the alternative early: %v", alts)
	}
}

// English contractions typed without the apostrophe give the tokens of the spelling with it;
// words that are words of their own stay, and German is left alone.
func TestTokensMendContractionsWithoutApostrophe(t *testing.T) {
	en, de := New("en"), New("de")
	for _, tc := range []struct {
		a    *Analyzer
		text string
		want []string
	}{
		{en, "car wont open", []string{"car", "won", "t", "open"}},
		{en, "car won't open", []string{"car", "won", "t", "open"}},
		{en, "Cant unlock, app doesnt work", []string{"can", "t", "unlock", "app", "doesn", "t", "work"}},
		{en, "its battery, well charged", []string{"its", "battery", "well", "charged"}},
		{de, "im Auto", []string{"im", "auto"}},
	} {
		if got := tc.a.Tokens(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.text, got, tc.want)
		}
	}
}

// German colloquial forms give the tokens of the written form, so that "geht nich auf" meets
// what "geht nicht auf" meets; words of their own ("Grad", "eine") stay, English is left alone.
func TestTokensWriteOutGermanColloquialForms(t *testing.T) {
	en, de := New("en"), New("de")
	for _, tc := range []struct {
		a    *Analyzer
		text string
		want []string
	}{
		{de, "Karre geht nich auf", []string{"karre", "geht", "nicht", "auf"}},
		{de, "gibts nen Ersatz fürn Kunden", []string{"gibt", "es", "einen", "ersatz", "fur", "einen", "kunden"}},
		{de, "steht aufm Standstreifen, Handy is leer", []string{"steht", "auf", "dem", "standstreifen", "handy", "ist", "leer"}},
		{de, "30 Grad im Auto, eine Stunde", []string{"30", "grad", "im", "auto", "eine", "stunde"}},
		{en, "the car is ne of here", []string{"the", "car", "is", "ne", "of", "here"}},
	} {
		if got := tc.a.Tokens(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.text, got, tc.want)
		}
	}
	// Every form and every contraction is written out (the filter of their ends lets each one
	// through), and a word that only shares their ends is not.
	for form, written := range germanColloquial {
		want := []string{written[0]}
		if written[1] != "" {
			want = append(want, written[1])
		}
		if got := de.written([]string{form}, nil); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", form, got, want)
		}
	}
	for form, head := range contractions {
		if got, want := en.written([]string{form}, nil), []string{head, form[len(head):]}; !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", form, got, want)
		}
	}
	if got := en.written([]string{"cart", "dot"}, nil); !slices.Equal(got, []string{"cart", "dot"}) {
		t.Errorf("cart dot: %q", got)
	}
	// The forms are stop words or meet the written form's terms: they are no words of their own.
	if g := de.Groups("geht nich auf"); len(g) != 1 || g[0].Term != de.Stem("nicht") {
		t.Errorf("geht nich auf: %+v, want the term of nicht", g)
	}
}

// A hand-written term of stop words only gives its alternatives to the word it is about (the
// next, else the one before); such a term of a generated list gives nothing.
func TestStopWordTermsAttachOnlyFromCuratedRules(t *testing.T) {
	for _, tc := range []struct {
		file, question, word string
		want                 bool
	}{
		{"en/operators.txt", "he can't get into the car", "car", true},
		{"en/operators.txt", "car: can't get into", "car", true},
		{"en/wordnet.txt", "he can't get into the car", "car", false},
	} {
		set, err := synonyms.Parse(tc.file, strings.NewReader("can't get into => unlock\n"))
		if err != nil {
			t.Fatal(err)
		}
		a := New("en")
		a = a.WithSynonyms(set.CompileStemmed(a.Tokens, a.Stem))
		got := false
		for _, g := range a.QuestionWords(tc.question) {
			if g.Term == a.Stem(tc.word) {
				got = slices.ContainsFunc(g.Alts, func(alt Alt) bool { return alt.Term == a.Stem("unlock") })
			}
		}
		if got != tc.want {
			t.Errorf("%s: %q: %q has unlock %v, want %v", tc.file, tc.question, tc.word, got, tc.want)
		}
	}
}

// TestFoldLatinIsDecomposedFold checks Fold's per-rune decomposition of Latin text against the
// decomposition of the whole text: every rune it covers, alone and between letters that the
// German folding joins with it ("a" before, "e" after).
func TestFoldLatinIsDecomposedFold(t *testing.T) {
	for _, lang := range []string{"en", "de"} {
		a := New(lang)
		reference := func(s string) string {
			var b strings.Builder
			f := folder{b: &b, de: lang == "de"}
			for _, r := range norm.NFKD.String(s) {
				f.add(r)
			}
			return b.String()
		}
		for r := rune(utf8.RuneSelf); r < latinEnd; r++ {
			for _, s := range []string{string(r), "a" + string(r) + "e", "Ü" + string(r) + "ss"} {
				if !isLatin(s) {
					t.Fatalf("%q is not taken as Latin", s)
				}
				if got, want := a.Fold(s), reference(s); got != want {
					t.Errorf("%s: Fold(%q) = %q, the decomposed text folds to %q", lang, s, got, want)
				}
			}
		}
	}
	if isLatin("Straße ☎") || isLatin("a\u0308") || isLatin("\xff") {
		t.Error("text beyond the table is taken as Latin")
	}
}

// TestFoldASCIIIsDecomposedFold checks Fold's ASCII loop against the folding of the decomposed
// text, on random ASCII with upper case and the German ae, oe and ue spellings.
func TestFoldASCIIIsDecomposedFold(t *testing.T) {
	alphabet := []string{"a", "A", "e", "E", "o", "O", "u", "U", "ae", "Oe", "UE", "z", "Z", "ss", "1", " ", "-", "\t", "~"}
	r := rand.New(rand.NewPCG(9, 10))
	for _, lang := range []string{"en", "de"} {
		a := New(lang)
		for range 20000 {
			var b strings.Builder
			for range r.IntN(12) {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			s := b.String()
			var want strings.Builder
			f := folder{b: &want, de: lang == "de"}
			for _, r := range norm.NFKD.String(s) {
				f.add(r)
			}
			if got := a.Fold(s); got != want.String() {
				t.Fatalf("%s: Fold(%q) = %q, the decomposed text folds to %q", lang, s, got, want.String())
			}
		}
	}
}

// A kept split is what a fresh split gives on every budget: the same parts and the same checks
// left, whether it was kept on a larger budget or not at all.
func TestKeptSplitDrawsAsAFreshSplit(t *testing.T) {
	base, s := boundedSplitter()
	tokens, stems := s.Words()
	toks := []string{"schadenskabel", "akkukabelschaden", "werkstattkundenreifen", "fahrzeugschlusselunfall",
		"kabelxakku", "unbekanntkabel", "akkuakkuakkuakkuakkuakkuakkuakkuakkuakku"}
	for _, tok := range toks {
		unbounded := MaxSplitChecks
		s.splitBudget(tok, &unbounded) // kept
		for budget := 0; budget <= MaxSplitChecks-unbounded+2; budget++ {
			fresh := RestoreSplitter(base, tokens, stems)
			wantLeft, gotLeft := budget, budget
			want, wantComplete := fresh.splitBudget(tok, &wantLeft)
			got, complete := s.splitBudget(tok, &gotLeft)
			if !slices.Equal(got, want) || complete != wantComplete || gotLeft != wantLeft {
				t.Errorf("%q on %d checks: kept %v, %v, %d left; fresh %v, %v, %d left", tok, budget,
					got, complete, gotLeft, want, wantComplete, wantLeft)
			}
		}
	}
	if n := len(s.memo); n == 0 {
		t.Error("no split was kept")
	}
}

// words splits as strings.FieldsFunc on non-letters and non-digits does, on every kind of text:
// ASCII, Latin letters, other scripts, marks, invalid UTF-8, separators at either end.
func TestWordsIsFieldsFunc(t *testing.T) {
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	}
	alphabet := []string{"a", "Z", "7", " ", ",", "-", "ä", "ß", "\u0308", "ﬁ", "Ж", "中", "٣", "\xff", "\t", "…", "_"}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		s := b.String()
		if got, want := words(s), split(s); !slices.Equal(got, want) {
			t.Fatalf("words(%q) = %q, FieldsFunc gives %q", s, got, want)
		}
	}
}

// TestQuestionScratchKeepsNoLargeArrays: the pooled arrays of QuestionWords are dropped when a
// long question made them large, and a used scratch, whose arrays still hold an earlier
// question's words, analyses a question as a fresh one does.
func TestQuestionScratchKeepsNoLargeArrays(t *testing.T) {
	long := &questionScratch{ws: make([]word, 0, 1000)}
	long.release()
	if cap(long.ws) != 0 {
		t.Errorf("a released scratch kept an array of %d words", cap(long.ws))
	}

	// The same groups whether the pool hands out a fresh scratch or a used one, used by a
	// longer question with other words and synonyms.
	a := New("en")
	want := a.QuestionWords("The customer's phone died and the car won't open")
	for range 3 {
		a.QuestionWords("Customer reports a flat tyre on the motorway, the warning light is on and the phone battery is low")
		if got := a.QuestionWords("The customer's phone died and the car won't open"); !reflect.DeepEqual(got, want) {
			t.Fatalf("groups differ on a reused scratch: %+v, want %+v", got, want)
		}
	}
}

// TestAnalyseQuestionKeepsItsTokensBySentence: a question's analysis holds the tokens Tokens
// gives for the whole text, each token's Stem, and where each sentence (WholeSentences) ends
// among them, contractions and colloquial forms that become two tokens included, so that no
// later step splits the text again.
func TestAnalyseQuestionKeepsItsTokensBySentence(t *testing.T) {
	for _, tc := range []struct{ lang, text string }{
		{"en", "Customer cant open the car. Phone is dead! What now?"},
		{"en", "phone dead, car locked"},
		{"en", "  Leading spaces. e.g. an abbreviation doesnt end it. 2. A list item? Yes\n\nnext line"},
		{"de", "Kunde steht aufm Parkplatz. Auto geht nich auf – was tun?"},
		{"de", "Wer zahlt das Knöllchen? Das is ne Frage z. B. zur Gebühr."},
		{"de", ""},
	} {
		a := New(tc.lang)
		var qa QuestionAnalysis
		a.AnalyseQuestion(&qa, tc.text)
		if want := a.Tokens(tc.text); !slices.Equal(qa.Tokens, want) {
			t.Errorf("%q: tokens %q, want %q", tc.text, qa.Tokens, want)
		}
		for i, tok := range qa.Tokens {
			if qa.Stems[i] != a.Stem(tok) {
				t.Errorf("%q: stem of %q %q, want %q", tc.text, tok, qa.Stems[i], a.Stem(tok))
			}
		}
		from, n := 0, 0
		for start, end := range WholeSentences(tc.text) {
			if n >= len(qa.Ends) {
				t.Fatalf("%q: %d sentence ends for more sentences", tc.text, len(qa.Ends))
			}
			if got, want := qa.Tokens[from:qa.Ends[n]], a.Tokens(tc.text[start:end]); !slices.Equal(got, want) {
				t.Errorf("%q: sentence %d's tokens %q, want %q", tc.text, n, got, want)
			}
			from, n = qa.Ends[n], n+1
		}
		if n != len(qa.Ends) {
			t.Errorf("%q: %d sentence ends for %d sentences", tc.text, len(qa.Ends), n)
		}
	}
}

// An analyzer's cached words keep what its synonym matcher knows of them (word.start): an
// analyzer given other synonyms (WithSynonyms of one that has analysed the same words, sharing
// its cache) finds its own rules' terms, not what the other's rules made of its words.
func TestWordsKeepTheirOwnMatchersStarts(t *testing.T) {
	compile := func(rules string) *synonyms.Matcher {
		set, err := synonyms.Parse("en/test.txt", strings.NewReader(rules))
		if err != nil {
			t.Fatal(err)
		}
		a := New("en") // an analyzer of its own: compiling caches no word of the question's below
		return set.CompileStemmed(a.Tokens, a.Stem)
	}
	alts := func(a *Analyzer, text string) []string {
		var out []string
		for _, w := range a.QuestionWords(text) {
			for _, alt := range w.Alts {
				out = append(out, alt.Term)
			}
		}
		return out
	}
	const q = "my handset died"
	first := New("en").WithSynonyms(compile("mobile died => low battery\n"))
	if got := alts(first, q); len(got) != 0 {
		t.Fatalf("first analyzer: alternatives %v, want none", got)
	}
	second := first.WithSynonyms(compile("handset => smartphone\n"))
	if got, want := alts(second, q), first.Stem("smartphone"); !slices.Equal(got, []string{want}) {
		t.Errorf("second analyzer after the first analysed the same words: alternatives %v, want only %q", got, want)
	}
}
