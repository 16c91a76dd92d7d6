package eval

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// TestRetrievalQualityFloors guards retrieval quality on the embedded corpus with the demo
// provider. The floors sit a little below the figures README.md reports (make eval), so that a
// change that costs quality fails here instead of going unnoticed.
func TestRetrievalQualityFloors(t *testing.T) {
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	ix := lexical.Build(c)
	svc := retrieval.New(ix, demo.New(ix), store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, set := range []struct {
		file                  string
		primary, top3, ood    float64
		minQuestions, minNone int
	}{
		{"dev.yaml", 0.90, 0.95, 0.90, 60, 16},
		{"holdout.yaml", 0.85, 0.85, 0.90, 60, 16},
		{"fresh.yaml", 0.85, 0.92, 0.90, 112, 24},
		{"probe.yaml", 0.95, 0.95, 0, 300, 0},
	} {
		t.Run(set.file, func(t *testing.T) {
			qs, err := Load(set.file)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Run(context.Background(), svc, qs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			r.Print(os.Stdout, set.file)
			if len(qs) < set.minQuestions || r.OutOfDomain < set.minNone {
				t.Fatalf("%d questions, %d out of domain: the set shrank", len(qs), r.OutOfDomain)
			}
			if r.PrimaryRate() < set.primary || r.Top3Rate() < set.top3 || (r.OutOfDomain > 0 && r.OODRate() < set.ood) {
				for _, m := range r.Misses {
					t.Log(m)
				}
				t.Fatalf("below the floors (primary %.2f, top-3 %.2f, out-of-domain %.2f)", set.primary, set.top3, set.ood)
			}
		})
	}
}
