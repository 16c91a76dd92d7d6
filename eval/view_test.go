package eval

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// TestADayViewAnswersAsABuildOfItsVersions: on every set of the versioned test corpus, the view
// of the index of every version onto the day's versions in force (lexical.Index.Project) gives
// every lookup and ask of the held-out sets, with their signals, on the demo provider and the
// ideal stand-in, exactly what an index built from those versions alone gives: the view's
// statistics, dead documents and dead terms are the build's.
func TestADayViewAnswersAsABuildOfItsVersions(t *testing.T) {
	c, _ := testutil.LoadVersioned(t)
	all := lexical.BuildAll(c)
	var qs []Question
	for _, f := range []string{"natural-holdout.yaml", "confusable-holdout.yaml", "styles-holdout.yaml", "multipart-holdout.yaml"} {
		set, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		qs = append(qs, set...)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, day := range []string{"2026-06-01", testutil.SwitchDay, testutil.ComingDay, testutil.AheadDay} {
		on := c.On(day)
		view, ok := all.Project(on)
		if !ok || view == all {
			t.Fatalf("%s: no view (%v)", day, ok)
		}
		built := lexical.Build(on)
		answers := func(ix *lexical.Index, scripted bool) []string {
			var p retrieval.LookupProvider = demo.New(ix)
			if scripted {
				p = NewScripted(ix, qs)
			}
			svc := retrieval.New(ix, p, store.NewMemory(), retrieval.DefaultOptions(), quiet)
			out := make([]string, 0, 2*len(qs))
			for _, q := range qs {
				out = append(out, recordOf(t, svc, q))
			}
			return out
		}
		for _, scripted := range []bool{false, true} {
			got, want := answers(view, scripted), answers(built, scripted)
			differ := 0
			for i := range got {
				if got[i] != want[i] {
					if differ++; differ <= 3 {
						t.Errorf("%s (ideal %v) %s: the view answers\n%s\nthe build\n%s", day, scripted, qs[i].ID, got[i], want[i])
					}
				}
			}
			if differ > 0 {
				t.Errorf("%s (ideal %v): %d of %d answers differ", day, scripted, differ, len(got))
			}
		}
	}
}

// recordOf is a question's lookup with its signals and its ask, without invocation ids and
// latencies, as JSON.
func recordOf(t *testing.T, svc *retrieval.Service, q Question) string {
	t.Helper()
	ctx, actor := context.Background(), port.Actor{ID: "view"}
	res, sg, err := svc.LookupSignals(ctx, lookup.LookupRequest{Question: q.Question, Language: q.Language, TopK: 5, Actor: actor})
	if err != nil {
		t.Fatal(err)
	}
	ans, err := svc.Ask(ctx, lookup.AskRequest{Question: q.Question, Language: q.Language, Actor: actor})
	if err != nil {
		t.Fatal(err)
	}
	res.InvocationID, ans.InvocationID = "", ""
	b, err := json.Marshal(struct {
		L lookup.Result
		S retrieval.Signals
		A lookup.Answer
	}{res, sg, ans})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
