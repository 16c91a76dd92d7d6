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

func TestRetrieveAppendsToTheBufferItIsLent(t *testing.T) {
	p := provider(t)
	q := port.Query{Question: "customer's phone died and the car won't open", Language: "en", TopK: 10}
	want := must(p.Retrieve(context.Background(), q))
	if len(want) < 2 {
		t.Fatalf("%d candidates", len(want))
	}
	// An array of the right size is used as it is; one too small is replaced, never overrun.
	for _, size := range []int{len(want), 1} {
		buf := make([]port.Candidate, size)
		for i := range buf {
			buf[i].Source = "stale"
		}
		q.Buffer = buf[:0]
		got := must(p.Retrieve(context.Background(), q))
		if !slices.Equal(got, want) {
			t.Fatalf("buffer of %d: %v, want %v", size, got, want)
		}
		if same := &got[0] == &buf[0]; same != (size >= len(want)) {
			t.Errorf("buffer of %d: its array used %v", size, same)
		}
		if size < len(want) && buf[0].Source != "stale" {
			t.Errorf("a buffer too small was written: %+v", buf[0])
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
	for _, state := range []string{port.StateGrounded, port.StateInsufficient} {
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
