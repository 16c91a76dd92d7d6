package eval

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// TestGroundedAtTieIsTheVerdict: over the realistic stand-in, whose answer and neighbours score a
// few thousandths apart, the verdict make calibrate reads from a lookup's signals at another tie
// (retrieval.GroundedAtTie) is the service's own at the configured tie for every question, and
// differs from it at no tie and at a wider one for some: the calibration measures the rule the
// lookups run.
func TestGroundedAtTieIsTheVerdict(t *testing.T) {
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	ix := lexical.Build(c)
	files, err := filepath.Glob("natural-dev*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no natural development sets: %v", err)
	}
	var asked, tiedAway, tiedIn int
	for _, f := range files {
		qs, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		svc := retrieval.New(ix, NewRealistic(ix, qs), store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.NewTextHandler(io.Discard, nil)))
		for _, q := range qs {
			res, sig, err := svc.LookupSignals(context.Background(), lookup.LookupRequest{Question: q.Question, Language: q.Language,
				TopK: 5, Actor: port.Actor{ID: "eval"}})
			if err != nil {
				t.Fatal(err)
			}
			asked++
			grounded := res.EvidenceState == port.StateGrounded
			if got := retrieval.GroundedAtTie(grounded, sig, retrieval.SemanticTie); got != grounded {
				t.Errorf("%s %s: grounded %v, GroundedAtTie at the configured tie %v (%s)", f, q.ID, grounded, got, res.Relevance.Reason)
			}
			if grounded && !retrieval.GroundedAtTie(grounded, sig, 0) {
				tiedAway++
			}
			if !grounded && retrieval.GroundedAtTie(grounded, sig, 3*retrieval.SemanticTie) {
				tiedIn++
			}
		}
	}
	if tiedAway == 0 || tiedIn == 0 {
		t.Errorf("of %d questions, %d grounded only by the tie and %d grounded by a tie three times as wide: the realistic stand-in no longer tests the tie",
			asked, tiedAway, tiedIn)
	}
	t.Logf("%d questions: %d grounded only by the tie, %d more at three times the tie", asked, tiedAway, tiedIn)
}
