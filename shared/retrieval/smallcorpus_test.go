package retrieval_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// TestMinimalPairGroundsItsQuestion: the minimal pair of docs/corpus.md, one procedure per
// language, is what a new user starts with: it grounds the questions it answers, in both
// languages, and not a question about something else.
func TestMinimalPairGroundsItsQuestion(t *testing.T) {
	raw, err := os.ReadFile("../../docs/corpus.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```markdown\n(.*?)\n```").FindAllStringSubmatch(string(raw), -1)
	if len(blocks) != 2 {
		t.Fatalf("%d markdown blocks in docs/corpus.md, want the English and the German file", len(blocks))
	}
	c := testutil.WriteCorpus(t, func(lang string) map[string]string {
		return map[string]string{"winter-tyres": blocks[map[string]int{"en": 0, "de": 1}[lang]][1] + "\n"}
	})
	ix := lexical.Build(c)
	svc := retrieval.New(ix, demo.New(ix), store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, tc := range []struct {
		lang, question, want string
	}{
		{"en", "What tread depth do winter tyres need?", "strong"},
		{"en", "When is the change to winter tyres planned?", "strong"},
		{"en", "When are summer tyres fitted?", "strong"},
		{"de", "Welche Profiltiefe brauchen Winterreifen?", "strong"},
		{"en", "How do I bake a chocolate cake?", "none|weak"},
		{"en", "What is the weather tomorrow?", "none|weak"},
		{"en", "How do I charge an electric car?", "none|weak"},
		{"en", "The customer lost a wallet in the car", "none|weak"},
		{"de", "Wie backe ich einen Schokoladenkuchen?", "none|weak"},
	} {
		res, err := svc.Lookup(context.Background(), lookup.LookupRequest{Question: tc.question, Language: tc.lang, TopK: 5, Actor: port.Actor{ID: "agent-7"}})
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile("^(" + tc.want + ")$").MatchString(string(res.Relevance.Assessment)) {
			t.Errorf("%s %q: %s (%s), want %s", tc.lang, tc.question, res.Relevance.Assessment, res.Relevance.Reason, tc.want)
		}
		// L0 matches the procedure's own keywords: in a corpus of one procedure no front-matter
		// word is generic.
		if tc.question == "What tread depth do winter tyres need?" && !slices.Contains(res.Retrieval.L0.MatchedKeywords, "tread depth") {
			t.Errorf("L0 %+v, want the keyword %q matched", res.Retrieval.L0, "tread depth")
		}
	}
}
