package status_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/status"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store/storetest"
)

// stubProvider answers Health as told and counts the calls; breaker, when set, is its circuit
// breaker's state.
type stubProvider struct {
	health  domain.HealthState
	calls   atomic.Int64
	breaker *bool
}

func (p *stubProvider) Name() string      { return "ragcore" }
func (p *stubProvider) Semantic() bool    { return true }
func (p *stubProvider) ScoreKind() string { return "cosine_similarity" }
func (p *stubProvider) Health(context.Context, port.Call) port.Health {
	p.calls.Add(1)
	return port.Health{Status: p.health}
}
func (p *stubProvider) Retrieve(context.Context, port.Query) ([]port.Candidate, error) {
	return nil, nil
}
func (p *stubProvider) Ask(context.Context, port.AskQuery) (port.GroundedAnswer, error) {
	return port.GroundedAnswer{}, nil
}
func (p *stubProvider) SyncManifest(context.Context, port.Call, []port.DocumentRef) (port.SyncResult, error) {
	return port.SyncResult{}, nil
}
func (p *stubProvider) VerifySource(context.Context, port.Call, string, string) (string, error) {
	return port.SourceIndexed, nil
}

// breakerProvider is a stubProvider behind a circuit breaker.
type breakerProvider struct{ *stubProvider }

func (p breakerProvider) BreakerOpen() bool { return *p.breaker }

// probedStore is the memory store with a probe that fails as told, counting probes.
type probedStore struct {
	*store.Memory
	fail   atomic.Bool
	probes atomic.Int64
}

func (s *probedStore) Probe(context.Context) error {
	s.probes.Add(1)
	if s.fail.Load() {
		return errors.New("RequestError: send request failed")
	}
	return nil
}

type counts map[string]int

func (c counts) Count(name string, n int) { c[name] += n }

func embedded(t *testing.T) *knowledge.Corpus {
	t.Helper()
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// noProcedures is a corpus with nothing for L0 to answer from. Loading refuses such a corpus,
// so a running service always has L0; the zero value stands for the case all the same.
func noProcedures(*testing.T) *knowledge.Corpus { return &knowledge.Corpus{} }

func healthOf(t *testing.T, corpus *knowledge.Corpus, p port.HealthChecker, records status.Records, o status.Options) domain.Health {
	t.Helper()
	v, _ := p.(port.Verifier)
	if v == nil {
		v = p.(breakerProvider).stubProvider
	}
	s := status.New(corpus, p, v, records, o, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	return s.CheckHealth(context.Background(), reader)
}

func TestHealthCombinations(t *testing.T) {
	open, closed := true, false
	for _, c := range []struct {
		name           string
		empty          bool               // no procedures loaded: L0 cannot answer
		provider       domain.HealthState // the provider's own health
		breaker        *bool
		storeDown      bool
		status, p, str string
	}{
		{"every component answers", false, "ok", nil, false, "ok", "ok", "ok"},
		{"provider unreachable: L0 answers", false, "unavailable", nil, false, "degraded", "failed", "ok"},
		{"provider reports itself degraded", false, "degraded", nil, false, "degraded", "failed", "ok"},
		{"store down: lookups answer without a stored trace", false, "ok", nil, true, "degraded", "ok", "failed"},
		{"provider and store down: L0 still answers", false, "unavailable", nil, true, "degraded", "failed", "failed"},
		{"breaker open", false, "ok", &open, false, "degraded", "circuit_open", "ok"},
		{"breaker closed", false, "ok", &closed, false, "ok", "ok", "ok"},
		{"breaker open and store down", false, "ok", &open, true, "degraded", "circuit_open", "failed"},
		{"provider down and no procedures: nothing answers", true, "unavailable", nil, false, "unavailable", "failed", "ok"},
		{"breaker open and no procedures", true, "ok", &open, true, "unavailable", "circuit_open", "failed"},
		{"no procedures but the provider answers", true, "ok", nil, true, "degraded", "ok", "failed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			corpus := embedded(t)
			if c.empty {
				corpus = noProcedures(t)
			}
			stub := &stubProvider{health: c.provider, breaker: c.breaker}
			var p port.HealthChecker = stub
			if c.breaker != nil {
				p = breakerProvider{stub}
			}
			records := &probedStore{Memory: store.NewMemory()}
			records.fail.Store(c.storeDown)
			m := counts{}
			h := healthOf(t, corpus, p, records, status.Options{Metrics: m})
			if h.Status != domain.HealthState(c.status) || h.Components.Provider != c.p || h.Components.Store != c.str || h.Provider != "ragcore" {
				t.Fatalf("health %+v, want status %s, provider %s, store %s", h, c.status, c.p, c.str)
			}
			if c.breaker != nil && *c.breaker && stub.calls.Load() != 0 {
				t.Error("the provider was asked while its breaker is open")
			}
			if h.Sidecar.Status != "disabled" {
				t.Errorf("sidecar %+v", h.Sidecar)
			}
			wantFailures := 0
			if c.storeDown {
				wantFailures = 1
			}
			if records.probes.Load() != 1 || m["StoreHealthFailures"] != wantFailures {
				t.Errorf("%d probes, StoreHealthFailures %d; want one probe, %d", records.probes.Load(), m["StoreHealthFailures"], wantFailures)
			}
		})
	}
}

// The probe's result is reused for StoreProbeTTL on the service's clock, then the store is
// probed again.
func TestStoreProbeIsReusedForItsTTL(t *testing.T) {
	clock := storetest.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	records := &probedStore{Memory: store.NewMemory()}
	p := &stubProvider{health: "ok"}
	s := status.New(embedded(t), p, p, records, status.Options{Now: clock.Now, StoreProbeTTL: 5 * time.Second},
		slog.New(slog.NewJSONHandler(io.Discard, nil)))
	ctx := context.Background()
	if h := s.CheckHealth(ctx, reader); h.Components.Store != "ok" {
		t.Fatalf("%+v", h)
	}
	records.fail.Store(true)
	clock.Advance(4 * time.Second)
	if h := s.CheckHealth(ctx, reader); h.Components.Store != "ok" || records.probes.Load() != 1 {
		t.Fatalf("within the TTL: %+v after %d probes, want the first result", h, records.probes.Load())
	}
	clock.Advance(time.Second)
	if h := s.CheckHealth(ctx, reader); h.Components.Store != "failed" || h.Status != "degraded" || records.probes.Load() != 2 {
		t.Fatalf("after the TTL: %+v after %d probes", h, records.probes.Load())
	}
}

// TestDynamoStoreProbe: the DynamoDB store's probe decides /health's store component: a table
// at a closed port fails the probe, and /health says the store failed while the rest answers.
// (The probe of a table that answers: store's TestDynamoProbe, against DynamoDB Local.)
func TestDynamoStoreProbe(t *testing.T) {
	p := &stubProvider{health: "ok"}
	if h := healthOf(t, embedded(t), p, store.NewMemory(), status.Options{}); h.Status != "ok" || h.Components.Store != "ok" {
		t.Fatalf("a store that answers: %+v", h)
	}
	addr := testutil.ClosedAddr(t)
	client, err := store.NewDynamoClient(context.Background(), store.ClientOptions{Endpoint: "http://" + addr, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	down := store.NewDynamo(client, "knowledge", time.Second, nil)
	if h := healthOf(t, embedded(t), p, down, status.Options{}); h.Status != "degraded" || h.Components.Store != "failed" || h.Components.Provider != "ok" {
		t.Fatalf("store down: %+v", h)
	}
}

// failingWrites is a probedStore whose trace writes fail.
type failingWrites struct{ *probedStore }

func (failingWrites) PutTrace(context.Context, lookup.Trace) error {
	return errors.New("RequestError: send request failed")
}

// TestStoreBreakerOpenIsAFailedStore: once the trace store's breaker opens, /health says the
// store failed at once, without probing it and whatever an earlier probe said.
func TestStoreBreakerOpenIsAFailedStore(t *testing.T) {
	clock := storetest.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	inner := &probedStore{Memory: store.NewMemory()}
	records := store.Guard(failingWrites{inner}, store.GuardOptions{Failures: 2, Cooldown: time.Hour})
	p := &stubProvider{health: "ok"}
	s := status.New(embedded(t), p, p, records, status.Options{Now: clock.Now, StoreProbeTTL: 5 * time.Second},
		slog.New(slog.NewJSONHandler(io.Discard, nil)))
	ctx := context.Background()
	if h := s.CheckHealth(ctx, reader); h.Status != "ok" || h.Components.Store != "ok" || inner.probes.Load() != 1 {
		t.Fatalf("before: %+v after %d probes", h, inner.probes.Load())
	}
	for range 2 {
		_ = records.PutTrace(ctx, lookup.Trace{InvocationID: "X"})
	}
	if !records.BreakerOpen() {
		t.Fatal("two failed writes did not open the breaker")
	}
	h := s.CheckHealth(ctx, reader) // within the probe's TTL: its "ok" must not hide the breaker
	if h.Status != "degraded" || h.Components.Store != "failed" || h.Components.Provider != "ok" || inner.probes.Load() != 1 {
		t.Fatalf("breaker open: %+v after %d probes, want degraded, store failed, no new probe", h, inner.probes.Load())
	}
}
