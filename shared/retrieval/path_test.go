package retrieval

import (
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// reranker is a fourth evidence path, added here alone: a reranking model as a fake that
// reorders the procedures L0 and L1 found and puts its favourite first. It takes no part of its
// own in the rule (it neither leads, holds nor seconds), so it is weighed as one more opinion.
type reranker struct{ favourite string }

func (*reranker) name() string { return "reranker" }

func (r *reranker) rank(in pathInput, v *pathView) {
	v.kind = "rerank_score"
	v.add(r.favourite, 1, "")
	for _, m := range in.matches {
		v.add(in.l.Docs[m.Doc].ID, 0.5, "")
	}
	for _, c := range in.cands {
		v.add(c.DocumentID, 0.5, c.Source)
	}
}

func (*reranker) beats(x, y float64) bool     { return x > y }
func (*reranker) near(r, own float64) bool    { return own-r < 0.1 }
func (*reranker) opinion(float64) bool        { return true }
func (*reranker) prefers(other string) string { return "the reranker ranks first " + other }

// withReranker is the service's table with a reranker favouring favourite after its paths.
func withReranker(favourite string) []evidencePath {
	return append(evidencePaths[:len(evidencePaths):len(evidencePaths)], &reranker{favourite: favourite})
}

// A path added in a test file alone is weighed: the verdict the three paths ground is not
// grounded once the reranker prefers another procedure, it names the reranker among the paths
// that favour the alternative, and a decisive semantic margin overrules it as it overrules the
// lexical search.
func TestAFourthPathIsWeighed(t *testing.T) {
	s := &Service{opts: DefaultOptions()}
	views := func(sem pathView, rerank ...any) *pathViews {
		v := newPathViews(withReranker("b"))
		copy(v.list, []pathView{sem, view("a", 5.0, "b", 2.0), view("a", 3.0), view(rerank...)})
		return v
	}
	agreeing := view("a", 0.78, "b", 0.77)
	if why, ok := s.weigh("a", views(agreeing, "a", 1.0, "b", 0.5)); !ok {
		t.Fatalf("the reranker agreeing: weigh = %q, not grounded", why)
	}
	v := views(agreeing, "b", 1.0, "a", 0.5)
	if why, ok := s.weigh("a", v); ok || why != "the reranker ranks first b rather than a" {
		t.Errorf("the reranker preferring b: weigh = %q, %v", why, ok)
	}
	alts := s.alternatives(nil, "a", v, nil)
	if len(alts) != 1 || alts[0].DocumentID != "b" || !slices.Contains(alts[0].FavouredBy, "reranker") {
		t.Errorf("alternatives %+v, want b favoured by the reranker", alts)
	}
	if sg := pathSignals("a", v); sg["reranker"].First != "b" {
		t.Errorf("signals %+v, want the reranker's", sg)
	}
	why, ok := s.weigh("a", views(view("a", 0.82, "b", 0.70), "b", 1.0, "a", 0.5))
	if !ok || why != "the semantic margin is decisive over the reranker ranks first b" {
		t.Errorf("a decisive semantic margin: weigh = %q, %v", why, ok)
	}
}

// Through a whole lookup: the reranker ranks from the lookup's own inputs, and a question the
// three paths ground is insufficient when it favours another procedure, which the relevance
// offers as an alternative.
func TestAFourthPathChangesTheVerdict(t *testing.T) {
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	ix := lexical.Build(c)
	s := New(ix, demo.New(ix), store.NewMemory(), DefaultOptions(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	req := lookup.LookupRequest{Question: "A customer left a phone in the car, how do we log the found item?", Language: "en", TopK: 5}
	res, err := s.Lookup(context.Background(), req)
	if err != nil || res.EvidenceState != "grounded" || res.Primary.DocumentID != "lost-and-found" {
		t.Fatalf("without the reranker: %v %s %+v", err, res.EvidenceState, res.Relevance)
	}
	s.paths = withReranker("vehicle-cleaning")
	res, err = s.Lookup(context.Background(), req)
	if err != nil || res.EvidenceState != "insufficient" ||
		!strings.Contains(res.Relevance.Reason, "the reranker ranks first vehicle-cleaning rather than lost-and-found") {
		t.Fatalf("with the reranker: %v %s %q", err, res.EvidenceState, res.Relevance.Reason)
	}
	if !slices.ContainsFunc(res.Relevance.Alternatives, func(a lookup.Alternative) bool {
		return a.DocumentID == "vehicle-cleaning" && slices.Equal(a.FavouredBy, []string{"reranker"})
	}) {
		t.Errorf("alternatives %+v, want vehicle-cleaning favoured by the reranker", res.Relevance.Alternatives)
	}
}

// Every path of the table is named in the contract's lists of paths (favoured_by in the OpenAPI
// document and in the Bedrock action group's), and the lists name no other: a new path is added
// there with its file.
func TestEveryPathIsInTheContract(t *testing.T) {
	var names []string
	for _, p := range evidencePaths {
		names = append(names, p.name())
	}
	for _, tc := range []struct{ file, open, close string }{
		{"../../docs/openapi.yaml", "enum: [", "]"},
		{"../../docs/bedrock-lookup.yaml", "Allowed values: ", "."},
	} {
		b, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(b)
		_, after, ok := strings.Cut(doc, "favoured_by:")
		_, list, ok2 := strings.Cut(after, tc.open)
		list, _, ok3 := strings.Cut(list, tc.close)
		if !ok || !ok2 || !ok3 {
			t.Fatalf("%s: no list of favoured_by's paths", tc.file)
		}
		if got := strings.Split(list, ", "); !slices.Equal(got, names) {
			t.Errorf("%s lists the paths %q, the table has %q", tc.file, got, names)
		}
	}
}
