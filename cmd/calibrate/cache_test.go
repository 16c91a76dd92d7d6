package main

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// countingProvider answers every query with one candidate naming the query's category, and
// fails the category "broken"; it counts its calls.
type countingProvider struct {
	calls  atomic.Int64
	synced atomic.Bool
}

func (p *countingProvider) Name() string      { return "counting" }
func (p *countingProvider) Semantic() bool    { return true }
func (p *countingProvider) ScoreKind() string { return "cosine_similarity" }

func (p *countingProvider) Retrieve(_ context.Context, q port.Query) ([]port.Candidate, error) {
	p.calls.Add(1)
	if q.Category == "broken" {
		return nil, errors.New("provider down")
	}
	return append([]port.Candidate(nil), port.Candidate{DocumentID: "d", Category: q.Category, Score: 0.7}), nil
}

func (p *countingProvider) Ask(context.Context, port.AskQuery) (port.GroundedAnswer, error) {
	return port.GroundedAnswer{}, nil
}

func (p *countingProvider) SyncManifest(context.Context, port.Call, []port.DocumentRef) (port.SyncResult, error) {
	p.synced.Store(true)
	return port.SyncResult{}, nil
}

func (p *countingProvider) Health(context.Context, port.Call) port.Health {
	return port.Health{Status: "ok"}
}

func TestCachedRetrievesEachQueryOnce(t *testing.T) {
	t.Parallel()
	inner := &countingProvider{}
	c := newCached(inner)
	ctx := context.Background()
	base := port.Query{Question: "phone died, car won't open", Language: "en", TopK: 15, Terms: []string{"phone", "die"},
		TermWeights: map[string]float64{"phone": 1, "die": 0.5}}

	// The same query from other callers, with other correlation ids, concurrently: one call.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			q := base
			q.Actor, q.CorrelationID = port.Actor{ID: "a"}, "c"+string(rune('0'+i))
			cands, err := c.Retrieve(ctx, q)
			if err != nil || len(cands) != 1 || cands[0].DocumentID != "d" {
				t.Errorf("Retrieve = %v, %v", cands, err)
			}
		})
	}
	wg.Wait()
	if n := inner.calls.Load(); n != 1 || c.Calls() != 1 {
		t.Fatalf("the same query reached the provider %d times (counted %d), want once", n, c.Calls())
	}

	// Whatever changes the answer is part of the key: the category filter, top_k, the language,
	// the question, the terms.
	variants := []func(q *port.Query){
		func(q *port.Query) { q.Category = "access" },
		func(q *port.Query) { q.TopK = 10 },
		func(q *port.Query) { q.Language = "de" },
		func(q *port.Query) { q.Question += "?" },
		func(q *port.Query) { q.TermWeights = map[string]float64{"phone": 1, "die": 1} },
	}
	for _, v := range variants {
		q := base
		v(&q)
		if _, err := c.Retrieve(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if n := inner.calls.Load(); n != int64(1+len(variants)) {
		t.Errorf("%d provider calls for %d distinct queries", n, 1+len(variants))
	}

	// A caller that changes its copy does not change what the next caller gets.
	got, _ := c.Retrieve(ctx, base)
	got[0].DocumentID = "changed"
	if again, _ := c.Retrieve(ctx, base); again[0].DocumentID != "d" {
		t.Errorf("a caller's change reached the cache: %v", again)
	}

	// An error is kept too: the question fails the same way at every pair, and the provider is
	// asked once.
	broken := base
	broken.Category = "broken"
	before := inner.calls.Load()
	for range 3 {
		if _, err := c.Retrieve(ctx, broken); err == nil {
			t.Fatal("the provider's error was lost")
		}
	}
	if n := inner.calls.Load() - before; n != 1 {
		t.Errorf("a failing query reached the provider %d times, want once", n)
	}

	// Calibration never changes what the provider holds.
	if _, err := c.SyncManifest(ctx, port.Call{}, nil); !errors.Is(err, errReadOnly) || inner.synced.Load() {
		t.Errorf("SyncManifest reached the provider (err %v)", err)
	}
}
