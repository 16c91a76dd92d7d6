package demo_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
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
	q := retrieval.Query{Question: "Ladekabel steckt fest an der Ladesäule", Language: "de", TopK: 8}
	a, err := p.Retrieve(context.Background(), q)
	if err != nil || len(a) == 0 {
		t.Fatalf("%v %v", a, err)
	}
	for range 5 {
		b, _ := p.Retrieve(context.Background(), q)
		if !slices.EqualFunc(a, b, func(x, y retrieval.Candidate) bool { return x.Source == y.Source && x.Score == y.Score }) {
			t.Fatal("the same question ranked differently")
		}
	}
	for i, c := range a {
		if c.Rank != i+1 || (i > 0 && c.Score > a[i-1].Score) || !strings.HasPrefix(c.Source, "procedures/de/") {
			t.Errorf("candidate %d: %+v", i, c)
		}
	}
	q.Category = "damage"
	for _, c := range must(p.Retrieve(context.Background(), q)) {
		if c.Category != "damage" {
			t.Errorf("filter let through %s", c.Source)
		}
	}
}

func must(c []retrieval.Candidate, err error) []retrieval.Candidate {
	if err != nil {
		panic(err)
	}
	return c
}

func TestAskIsATemplateOfExtractedPassages(t *testing.T) {
	p := provider(t)
	a, err := p.Ask(context.Background(), retrieval.AskQuery{Question: "What must I do when a customer reports a stolen vehicle?", Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Generated || !strings.Contains(a.Answer, "not generated text") || len(a.Sources) == 0 {
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
		if !strings.HasPrefix(content, strings.TrimSuffix(s.Excerpt, "…")) {
			t.Errorf("excerpt of %s/%s is not extracted verbatim", s.DocumentID, s.Section)
		}
		if !strings.Contains(a.Answer, strings.TrimSuffix(s.Excerpt, "…")) {
			t.Errorf("the answer does not quote %s", s.Section)
		}
	}
}

func TestAskSaysInsufficientPlainly(t *testing.T) {
	p := provider(t)
	a, err := p.Ask(context.Background(), retrieval.AskQuery{Question: "How do I bake sourdough bread?", Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if a.EvidenceState != retrieval.StateInsufficient || !strings.Contains(a.Answer, "no answer is given") && !strings.Contains(a.Answer, "do not clearly cover") {
		t.Fatalf("answer %+v", a)
	}
}

func TestSyncManifestSaysNothingWasUploaded(t *testing.T) {
	p := provider(t)
	r, err := p.SyncManifest(context.Background(), retrieval.Call{}, []retrieval.DocumentRef{{DocumentID: "damage-procedure"}, {DocumentID: "ev-charging"}})
	if err != nil || r.Documents != 2 || r.Uploaded != 0 || !strings.Contains(r.Note, "nothing was uploaded") {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestCancelledContext(t *testing.T) {
	p := provider(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Retrieve(ctx, retrieval.Query{Question: "tyre", Language: "en", TopK: 3}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if h := p.Health(context.Background(), retrieval.Call{}); h.Status != "ok" {
		t.Fatalf("health %+v", h)
	}
}
