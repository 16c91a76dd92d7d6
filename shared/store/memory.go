// Package store keeps the service's records: invocation traces (and, later, the verification
// cache and sync reports). Memory is the embedded default.
package store

import (
	"context"
	"sync"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
)

// Memory is the in-memory store: the embedded default for `make local` and unit tests. Expired
// records are invisible to reads, exactly as in the DynamoDB store.
type Memory struct {
	mu     sync.RWMutex
	traces map[string]retrieval.Trace
	now    func() time.Time
}

var _ retrieval.TraceStore = (*Memory)(nil)

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{traces: map[string]retrieval.Trace{}, now: time.Now}
}

// PutTrace implements retrieval.TraceStore.
func (m *Memory) PutTrace(ctx context.Context, t retrieval.Trace) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.traces[t.InvocationID] = t
	return nil
}

// GetTrace implements retrieval.TraceStore.
func (m *Memory) GetTrace(ctx context.Context, id string) (retrieval.Trace, error) {
	if err := ctx.Err(); err != nil {
		return retrieval.Trace{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.traces[id]
	if !ok || !m.now().Before(t.ExpiresAt) {
		return retrieval.Trace{}, retrieval.ErrNotFound
	}
	return t, nil
}
