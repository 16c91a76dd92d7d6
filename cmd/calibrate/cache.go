package main

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/singleflight"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/wire"
)

// errReadOnly refuses what calibration must never do to the provider.
var errReadOnly = errors.New("calibrate is read-only: it never syncs procedures")

// cached is the configured provider with every distinct retrieval made once: each threshold
// pair's lookups reuse the candidates the first lookup of the same query received, so the
// verdict of every pair is judged on the same evidence and the provider sees each query once.
// An error is kept like candidates: the question fails the same way at every pair.
type cached struct {
	wire.Provider

	mu      sync.Mutex
	entries map[string]*retrieved
	group   singleflight.Group
	calls   atomic.Int64
}

// retrieved is one query's answer.
type retrieved struct {
	cands []port.Candidate
	err   error
}

var (
	_ wire.Provider       = (*cached)(nil)
	_ port.Retriever      = (*cached)(nil)
	_ port.Answerer       = (*cached)(nil)
	_ port.ManifestSyncer = (*cached)(nil)
	_ port.HealthChecker  = (*cached)(nil)
)

func newCached(p wire.Provider) *cached {
	return &cached{Provider: p, entries: map[string]*retrieved{}}
}

// Retrieve implements port.Retriever: the provider's answer to the first call of the query.
func (c *cached) Retrieve(ctx context.Context, q port.Query) ([]port.Candidate, error) {
	key, err := queryKey(q)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	r, ok := c.entries[key]
	c.mu.Unlock()
	if !ok {
		v, _, _ := c.group.Do(key, func() (any, error) {
			c.mu.Lock()
			r, ok := c.entries[key]
			c.mu.Unlock()
			if ok {
				return r, nil
			}
			cands, err := c.Provider.Retrieve(ctx, q)
			c.calls.Add(1)
			r = &retrieved{cands: slices.Clone(cands), err: err}
			c.mu.Lock()
			c.entries[key] = r
			c.mu.Unlock()
			return r, nil
		})
		r = v.(*retrieved)
	}
	// Each lookup gets its own copy: nothing a caller does to its candidates reaches the cache.
	return slices.Clone(r.cands), r.err
}

// Calls is the number of queries sent to the provider.
func (c *cached) Calls() int64 { return c.calls.Load() }

// SyncManifest refuses: calibration reads, it never changes what the provider holds.
func (c *cached) SyncManifest(context.Context, port.Call, []port.DocumentRef) (port.SyncResult, error) {
	return port.SyncResult{}, errReadOnly
}

// queryKey is everything of a query that can change the provider's answer: the question, its
// language, the category filter, top_k, the analysed terms, and whatever a later field adds (an
// as-of date). Who asks, the correlation id and the array the caller lends for the candidates
// (empty or not, never part of the question) are left out.
func queryKey(q port.Query) (string, error) {
	q.Actor, q.CorrelationID, q.Buffer = port.Actor{}, "", nil
	b, err := json.Marshal(q)
	return string(b), err
}
