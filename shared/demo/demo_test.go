package demo_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

func provider(t *testing.T) *demo.Provider {
	t.Helper()
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return demo.New(lexical.Build(c))
}

func TestRetrieveIsDeterministicAndFiltered(t *testing.T) {
	p := provider(t)
	q := port.Query{Question: "Ladekabel steckt fest an der Ladesäule", Language: "de", TopK: 8}
	a, err := p.Retrieve(context.Background(), q)
	if err != nil || len(a) == 0 {
		t.Fatalf("%v %v", a, err)
	}
	for range 5 {
		b, _ := p.Retrieve(context.Background(), q)
		if !slices.EqualFunc(a, b, func(x, y port.Candidate) bool { return x.Source == y.Source && x.Score == y.Score }) {
			t.Fatal("the same question ranked differently")
		}
	}
	for i, c := range a {
		if c.Rank != i+1 || (i > 0 && c.Score > a[i-1].Score) || !strings.HasPrefix(c.Source, "procedures/de/") {
			t.Errorf("candidate %d: %+v", i, c)
		}
	}
	// The unfiltered ranking leads with charging; the compliance filter keeps the procedure on
	// parking at a charging station and drops the rest.
	if a[0].Category == "compliance" {
		t.Fatalf("the unfiltered ranking leads with compliance: %s", a[0].Source)
	}
	q.Category = "compliance"
	filtered := must(p.Retrieve(context.Background(), q))
	if len(filtered) == 0 {
		t.Fatal("the compliance filter let nothing through")
	}
	for _, c := range filtered {
		if c.Category != "compliance" {
			t.Errorf("filter let through %s", c.Source)
		}
	}
}

func must(c []port.Candidate, err error) []port.Candidate {
	if err != nil {
		panic(err)
	}
	return c
}

func TestAskIsATemplateOfExtractedPassages(t *testing.T) {
	ix := lexical.Build(must2(knowledge.Embedded()))
	p := demo.New(ix)
	svc := retrieval.New(ix, p, store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	req := lookup.AskRequest{Question: "What must I do when a customer reports a stolen vehicle?", Language: "en"}
	a, err := svc.Ask(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if a.AnswerKind != "template" || !strings.Contains(a.Answer, "not generated text") || len(a.Sources) == 0 {
		t.Fatalf("answer %+v", a)
	}
	c, _ := knowledge.Embedded()
	for _, s := range a.Sources {
		d := c.Document("en", s.DocumentID)
		var content string
		for _, sec := range d.Sections {
			if sec.Heading == s.Section {
				content = sec.Content
			}
		}
		// An excerpt is runs of the section's sentences, each verbatim, joined by "…".
		for _, run := range strings.Split(s.Excerpt, "…") {
			if run = strings.TrimSpace(run); run != "" && !strings.Contains(content, run) {
				t.Errorf("excerpt of %s/%s is not extracted verbatim: %q", s.DocumentID, s.Section, run)
			}
		}
		if !strings.Contains(a.Answer, s.Excerpt) {
			t.Errorf("the answer does not quote %s", s.Section)
		}
	}
	// The answer comes from the lookup's own ranked blocks, with its state.
	res, err := svc.Lookup(context.Background(), lookup.LookupRequest{Question: req.Question, Language: "en", TopK: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.EvidenceState != a.EvidenceState || len(res.EvidenceBlocks) != len(a.Sources) {
		t.Fatalf("lookup %s with %d blocks, ask %s with %d sources", res.EvidenceState, len(res.EvidenceBlocks), a.EvidenceState, len(a.Sources))
	}
	for i, b := range res.EvidenceBlocks {
		if a.Sources[i].DocumentID != b.DocumentID || a.Sources[i].Section != b.Section {
			t.Errorf("source %d %s/%s, lookup block %s/%s", i, a.Sources[i].DocumentID, a.Sources[i].Section, b.DocumentID, b.Section)
		}
	}
}

func TestAskQuotesTheEvidenceItIsGiven(t *testing.T) {
	p := provider(t)
	ev := []port.AskEvidence{{Block: port.Passage{DocumentID: "ev-charging", Title: "EV charging and low battery",
		Version: "1.2", Section: "3. Low battery"}, Excerpt: "below 15 %"}}
	for _, state := range []port.EvidenceState{port.StateGrounded, port.StateInsufficient} {
		a, err := p.Ask(context.Background(), port.AskQuery{Question: "battery low", Language: "en", Evidence: ev, EvidenceState: state})
		if err != nil {
			t.Fatal(err)
		}
		if a.EvidenceState != state || len(a.Sources) != 1 || a.Sources[0].Excerpt != "below 15 %" || !strings.Contains(a.Answer, "below 15 %") {
			t.Errorf("%s: answer %+v", state, a)
		}
		if state == port.StateInsufficient && !strings.Contains(a.Answer, "do not clearly cover") {
			t.Errorf("insufficient answer does not say so: %q", a.Answer)
		}
	}
}

func TestAskSaysInsufficientPlainly(t *testing.T) {
	p := provider(t)
	a, err := p.Ask(context.Background(), port.AskQuery{Question: "How do I bake sourdough bread?", Language: "en",
		EvidenceState: port.StateInsufficient})
	if err != nil {
		t.Fatal(err)
	}
	if a.EvidenceState != port.StateInsufficient || !strings.Contains(a.Answer, "no answer is given") {
		t.Fatalf("answer %+v", a)
	}
}

func must2[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestSyncManifestSaysNothingWasUploaded(t *testing.T) {
	p := provider(t)
	r, err := p.SyncManifest(context.Background(), port.Call{}, []port.DocumentRef{{DocumentID: "damage-procedure"}, {DocumentID: "ev-charging"}})
	if err != nil || r.Documents != 2 || r.Uploaded != 0 || !strings.Contains(r.Note, "nothing was uploaded") {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestCancelledContext(t *testing.T) {
	p := provider(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Retrieve(ctx, port.Query{Question: "tyre", Language: "en", TopK: 3}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if h := p.Health(context.Background(), port.Call{}); h.Status != "ok" {
		t.Fatalf("health %+v", h)
	}
}

// englishWording is the demo provider's and the service's English wording around an answer's
// passages: none of it may reach a German answer.
var englishWording = []string{"Extracted from", "demo provider", "not generated text", "Follow the cited procedure",
	"do not clearly cover", "no procedure is inferred", "Closest passages", "(version ", "No procedure passage matches",
	"no answer is given"}

// Questions of every kind of answer the demo provider gives, in both languages: grounded, not
// clearly covered, and no passage at all.
var askQuestions = map[string][]string{
	"en": {"Which severity level and acknowledgement time apply to a SEV2 incident?",
		"Whom does the agent call for a SEV1 incident, and at which extension?",
		"What must I do when a customer reports a stolen vehicle?",
		"The customer wants a refund for the parking fine", "How do I bake sourdough bread?"},
	"de": {"Welcher Schweregrad und welche Quittierungszeit gelten für eine SEV2-Störung?",
		"Wen ruft die Leitstelle bei einer SEV1-Störung an, unter welcher Durchwahl?",
		"Was muss ich tun, wenn ein Kunde ein gestohlenes Fahrzeug meldet?",
		"Der Kunde will das Knöllchen erstattet haben", "Wie backe ich ein Sauerteigbrot?"},
}

func TestAskSpeaksTheLanguageOfTheQuestion(t *testing.T) {
	ix := lexical.Build(must2(knowledge.Embedded()))
	svc := retrieval.New(ix, demo.New(ix), store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	for lang, questions := range askQuestions {
		states := map[port.EvidenceState]bool{}
		for _, q := range questions {
			a, err := svc.Ask(context.Background(), lookup.AskRequest{Question: q, Language: lang})
			if err != nil {
				t.Fatal(err)
			}
			states[a.EvidenceState] = true
			for _, w := range englishWording {
				if english := strings.Contains(a.Answer, w); english != (lang == "en") && (lang == "de" || wordingOf(a, w)) {
					t.Errorf("%s %q: answer %q, English wording %q present: %v", lang, q, a.Answer, w, english)
				}
			}
		}
		if !states[port.StateGrounded] || !states[port.StateInsufficient] {
			t.Errorf("%s: the questions gave only %v: not every kind of answer is checked", lang, states)
		}
	}
}

// wordingOf reports whether the English answer a must hold w: the phrases of its own kind.
func wordingOf(a lookup.Answer, w string) bool {
	switch {
	case len(a.Sources) == 0:
		return w == "No procedure passage matches" || w == "no answer is given" || w == "demo provider" || w == "not generated text"
	case a.EvidenceState == port.StateGrounded:
		return w == "Extracted from" || w == "Follow the cited procedure" || w == "(version " || w == "demo provider"
	default:
		return w == "do not clearly cover" || w == "Closest passages" || w == "(version "
	}
}

// Every excerpt, in the sources and as the answer quotes it, begins at the beginning of one of
// its section's sentences: never inside one, never with "…".
func TestAskExcerptsBeginAtASentence(t *testing.T) {
	c := must2(knowledge.Embedded())
	ix := lexical.Build(c)
	svc := retrieval.New(ix, demo.New(ix), store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	cut := 0
	for lang, questions := range askQuestions {
		for _, q := range questions {
			a, err := svc.Ask(context.Background(), lookup.AskRequest{Question: q, Language: lang})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range a.Sources {
				var content string
				for _, sec := range c.Document(lang, s.DocumentID).Sections {
					if sec.Heading == s.Section {
						content = sec.Content
					}
				}
				if strings.HasPrefix(s.Excerpt, "…") {
					t.Errorf("%s %q: excerpt of %s/%s begins with …: %q", lang, q, s.DocumentID, s.Section, s.Excerpt)
					continue
				}
				// Every run of sentences, the first and those after a gap, begins at a sentence.
				for i, run := range strings.Split(s.Excerpt, "…") {
					if run = strings.TrimSpace(run); run == "" {
						continue
					}
					at := strings.Index(content, run)
					if at < 0 {
						t.Errorf("%s %q: excerpt run %q is not verbatim", lang, q, run)
						continue
					}
					if i == 0 && at > 0 {
						cut++
					}
					if before := strings.TrimRight(content[:at], " "); !sentenceEnd(before) {
						t.Errorf("%s %q: excerpt of %s/%s has a run beginning inside a sentence, after %q: %q", lang, q,
							s.DocumentID, s.Section, before[max(0, len(before)-30):], run)
					}
				}
				if !strings.Contains(a.Answer, ": "+s.Excerpt) {
					t.Errorf("%s %q: the answer does not quote the excerpt %q", lang, q, s.Excerpt)
				}
			}
		}
	}
	if cut == 0 {
		t.Error("no excerpt begins after the beginning of its section: the test shows nothing")
	}
}

// sentenceEnd reports whether text before an excerpt ends a sentence: nothing, a line, or a full
// stop, question or exclamation mark that is not an abbreviation's or a numbered item's.
func sentenceEnd(before string) bool {
	if before == "" || strings.HasSuffix(before, "\n") || strings.HasSuffix(before, "?") || strings.HasSuffix(before, "!") {
		return true
	}
	if !strings.HasSuffix(before, ".") {
		return false
	}
	word := before[strings.LastIndexAny(before, " \n(")+1:]
	switch strings.ToLower(word) {
	case "ext.", "bzw.", "z.", "b.", "max.", "e.g.", "i.e.":
		return false
	}
	if strings.Trim(word, "0123456789.") == "" { // "2." opening a numbered item
		at := len(before) - len(word)
		return at > 0 && before[at-1] != '\n'
	}
	return true
}
