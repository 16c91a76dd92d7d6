package retrieval_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// The zero Options are valid: L1 off, and otherwise the production ranking and verdict (the
// lexical thresholds do not come from the options), traces kept config.DefaultTraceRetention.
func TestZeroOptionsAreValid(t *testing.T) {
	ix := index(t)
	off := retrieval.DefaultOptions()
	off.L1Enabled = false
	traces := store.NewMemory()
	zero := retrieval.New(ix, demo.New(ix), traces, retrieval.Options{}, slog.New(slog.DiscardHandler))
	want := retrieval.New(ix, demo.New(ix), store.NewMemory(), off, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	for _, q := range []string{damageQuestion, "What is the capital of Australia?"} {
		req := lookup.LookupRequest{Question: q, Language: "en", TopK: 5, Actor: port.Actor{ID: "a"}}
		got, err := zero.Lookup(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		exp, err := want.Lookup(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if got.EvidenceState != exp.EvidenceState || primarySource(got) != primarySource(exp) || got.Relevance.Reason != exp.Relevance.Reason {
			t.Errorf("%q: zero options answer %s %s (%s), the defaults without L1 %s %s (%s)", q,
				got.EvidenceState, primarySource(got), got.Relevance.Reason, exp.EvidenceState, primarySource(exp), exp.Relevance.Reason)
		}
		tr, err := traces.GetTrace(ctx, got.InvocationID)
		if err != nil {
			t.Fatal(err)
		}
		if kept := tr.ExpiresAt.Sub(tr.CreatedAt); kept != config.DefaultTraceRetention {
			t.Errorf("%q: trace kept %v, want %v", q, kept, time.Duration(config.DefaultTraceRetention))
		}
	}
}

func primarySource(r lookup.Result) string {
	if r.Primary == nil {
		return "-"
	}
	return r.Primary.Source
}
