package store

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
)

// Memory is the in-memory store: the embedded default for `make local` and unit tests. Expired
// records are invisible to reads, exactly as in the DynamoDB store, and are dropped when the
// store grows (maxTraces), so that a long-running local API stays bounded. Dropping unexpired
// traces is a loss: it is counted (Evicted) and logged, one warning per eviction.
type Memory struct {
	mu sync.RWMutex
	// traces holds each trace by pointer: a trace is larger than a map keeps in its slots (so it
	// was one allocation a write either way), and an eviction reads each dropped trace's time
	// without copying the whole trace.
	traces map[string]*lookup.Trace
	// order holds trace ids in the order they were first written, oldest first, possibly with
	// ids already dropped: eviction takes the oldest from its front.
	order []string
	// soonest is, when soonestKnown, at most the earliest expiry of the traces stored, so that an
	// eviction before it knows that none has expired without looking at every trace.
	soonest      time.Time
	soonestKnown bool
	verify       map[string]CachedVerification
	reports      map[string]domain.SyncReport // namespace#run_id#language
	latest       map[string]domain.SyncReport // namespace#language
	leases       map[string]lease
	now          func() time.Time
	maxTrace     int
	log          *slog.Logger
	evicted      atomic.Int64
}

type lease struct {
	owner   string
	expires time.Time
}

var _ Records = (*Memory)(nil)

// maxTraces bounds the traces kept in memory; the oldest are dropped first.
const maxTraces = 10000

// NewMemory returns an empty in-memory store on the wall clock.
func NewMemory() *Memory { return NewMemoryAt(time.Now) }

// NewMemoryAt returns an empty in-memory store on the given clock (tests move time).
func NewMemoryAt(now func() time.Time) *Memory {
	return &Memory{traces: map[string]*lookup.Trace{}, verify: map[string]CachedVerification{},
		reports: map[string]domain.SyncReport{}, latest: map[string]domain.SyncReport{}, leases: map[string]lease{}, now: now, maxTrace: maxTraces,
		log: slog.New(slog.DiscardHandler)}
}

// WithLogger sets where evictions are reported (nothing by default) and returns m.
func (m *Memory) WithLogger(log *slog.Logger) *Memory {
	if log != nil {
		m.log = log
	}
	return m
}

// Evicted is the number of unexpired traces dropped to keep the store bounded since it was made.
func (m *Memory) Evicted() int64 { return m.evicted.Load() }

// PutTrace implements Records.
func (m *Memory) PutTrace(ctx context.Context, t lookup.Trace) error {
	_, err := m.putTrace(ctx, t, false)
	return err
}

// PutTraceIfAbsent stores a trace unless its invocation id is stored already; it reports whether
// this call stored it.
func (m *Memory) PutTraceIfAbsent(ctx context.Context, t lookup.Trace) (bool, error) {
	return m.putTrace(ctx, t, true)
}

func (m *Memory) putTrace(ctx context.Context, t lookup.Trace, ifAbsent bool) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if t.InvocationID == "" {
		return false, ErrInvalid
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if ifAbsent {
		if _, stored := m.traces[t.InvocationID]; stored {
			return false, nil
		}
	}
	if len(m.traces) >= m.maxTrace {
		m.evictTraces()
	}
	// A new id grows the map: its length tells, without a look-up of its own, whether the id
	// joins the order of writing.
	n := len(m.traces)
	m.traces[t.InvocationID] = &t
	if len(m.traces) > n {
		m.order = append(m.order, t.InvocationID)
	}
	if m.soonestKnown && t.ExpiresAt.Before(m.soonest) {
		m.soonest = t.ExpiresAt
	}
	return true, nil
}

// evictTraces drops expired traces, then the oldest tenth if that freed nothing. Dropping
// unexpired traces is counted and logged once per eviction (one burst of drops).
func (m *Memory) evictTraces() {
	now := m.now()
	expired := 0
	if !m.soonestKnown || !now.Before(m.soonest) {
		m.soonestKnown = false
		for id, t := range m.traces {
			if !now.Before(t.ExpiresAt) {
				delete(m.traces, id)
				expired++
			} else if !m.soonestKnown || t.ExpiresAt.Before(m.soonest) {
				m.soonest, m.soonestKnown = t.ExpiresAt, true
			}
		}
	}
	if len(m.traces) < m.maxTrace {
		return
	}
	// The oldest tenth by the order of writing (traces are created as they are written), from
	// the front of order: no sort of every trace, which would cost a sixth of an in-process
	// lookup's time once the store is full.
	want := len(m.traces)/10 + 1
	var oldest, newest time.Time
	dropped, i := 0, 0
	for ; i < len(m.order) && dropped < want; i++ {
		id := m.order[i]
		t, ok := m.traces[id]
		if !ok {
			continue // expired and dropped above, or never kept
		}
		if dropped == 0 {
			oldest = t.CreatedAt
		}
		newest = t.CreatedAt
		delete(m.traces, id)
		dropped++
	}
	m.order = m.order[i:]
	if len(m.order) > 2*m.maxTrace {
		// Ids of expired traces pile up behind the front: keep only those still stored.
		m.order = slices.DeleteFunc(slices.Clone(m.order), func(id string) bool { _, ok := m.traces[id]; return !ok })
	}
	total := m.evicted.Add(int64(dropped))
	m.log.Warn("in-memory store full: oldest unexpired traces dropped",
		"dropped", dropped, "expired_dropped", expired, "evicted_total", total, "max_traces", m.maxTrace,
		"oldest_created_at", oldest, "newest_dropped_created_at", newest)
}

// GetTrace implements Records.
func (m *Memory) GetTrace(ctx context.Context, id string) (lookup.Trace, error) {
	if err := ctx.Err(); err != nil {
		return lookup.Trace{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.traces[id]
	if !ok || !m.now().Before(t.ExpiresAt) {
		return lookup.Trace{}, domain.ErrNotFound
	}
	return *t, nil
}

// PutVerification stores a verification result, valid for VerificationTTL.
func (m *Memory) PutVerification(ctx context.Context, ns domain.Namespace, lang string, v Verification) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.verify[nsKey(ns)+"#"+lang] = CachedVerification{Verification: v, StoredAt: now, ExpiresAt: now.Add(VerificationTTL)}
	return nil
}

// GetVerification returns the cached result unless it is absent or expired.
func (m *Memory) GetVerification(ctx context.Context, ns domain.Namespace, lang string) (CachedVerification, error) {
	if err := ctx.Err(); err != nil {
		return CachedVerification{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	c, ok := m.verify[nsKey(ns)+"#"+lang]
	if !ok || !m.now().Before(c.ExpiresAt) {
		return CachedVerification{}, domain.ErrNotFound
	}
	return c, nil
}

// PutSyncReport stores a report once per run_id and language and makes it the latest of its language unless
// a newer one is stored; every report is kept for audit. Latest says whether the report of this
// run_id is the latest after the call, for a duplicate too.
func (m *Memory) PutSyncReport(ctx context.Context, ns domain.Namespace, r domain.SyncReport) (domain.ReportResult, error) {
	if err := ctx.Err(); err != nil {
		return domain.ReportResult{}, err
	}
	if err := checkReport(r); err != nil {
		return domain.ReportResult{}, err
	}
	if r.ReceivedAt.IsZero() {
		r.ReceivedAt = m.now().UTC()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	rk := nsKey(ns) + "#" + r.RunID + "#" + r.Language
	lk := nsKey(ns) + "#" + r.Language
	if stored, ok := m.reports[rk]; ok {
		cur := m.latest[lk]
		return domain.ReportResult{Duplicate: true, Differs: !sameResult(stored, r), Latest: cur.RunID == stored.RunID}, nil
	}
	m.reports[rk] = r
	if cur, ok := m.latest[lk]; ok && !newer(r, cur) {
		return domain.ReportResult{}, nil
	}
	m.latest[lk] = r
	return domain.ReportResult{Latest: true}, nil
}

// LatestSyncReport returns the newest report of a language.
func (m *Memory) LatestSyncReport(ctx context.Context, ns domain.Namespace, lang string) (domain.SyncReport, error) {
	if err := ctx.Err(); err != nil {
		return domain.SyncReport{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	r, ok := m.latest[nsKey(ns)+"#"+lang]
	if !ok {
		return domain.SyncReport{}, domain.ErrNotFound
	}
	return r, nil
}

// SyncReports returns every stored report of a namespace, ordered by run_id, then language.
func (m *Memory) SyncReports(ctx context.Context, ns domain.Namespace) ([]domain.SyncReport, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []domain.SyncReport
	prefix := nsKey(ns) + "#"
	for k, r := range m.reports {
		if strings.HasPrefix(k, prefix) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b domain.SyncReport) int {
		if c := strings.Compare(a.RunID, b.RunID); c != 0 {
			return c
		}
		return strings.Compare(a.Language, b.Language)
	})
	return out, nil
}

// Probe implements the health check: the in-memory store always answers.
func (m *Memory) Probe(ctx context.Context) error { return ctx.Err() }

// Len is the number of traces held, expired ones included until they are dropped.
func (m *Memory) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.traces)
}

// AcquireLease takes the named lease for owner unless another owner holds an unexpired one.
func (m *Memory) AcquireLease(ctx context.Context, name, owner string, ttl time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.leases[name]; ok && l.owner != owner && now.Before(l.expires) {
		return false, nil
	}
	m.leases[name] = lease{owner: owner, expires: now.Add(ttl)}
	return true, nil
}

// ReleaseLease gives the lease up if owner still holds it.
func (m *Memory) ReleaseLease(ctx context.Context, name, owner string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.leases[name]; ok && l.owner == owner {
		delete(m.leases, name)
	}
	return nil
}
