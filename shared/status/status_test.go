package status_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ragcorefake"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/ragcore"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/status"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store/storetest"
)

// The tests verify against the fake RAGcore over loopback HTTP and keep the cache and leases in
// the memory store, which passes the same store suite (storetest) as the DynamoDB store; the
// DynamoDB store's own tests run that suite against DynamoDB Local.

const token = "status-test-token"

var ns = domain.Namespace{Tenant: "northstar-mobility-demo", Workspace: "mobilityops", Collection: "internal-procedures"}

var reader = port.Call{Actor: port.Actor{ID: "console-1", Scopes: []string{"knowledge:read"}}, CorrelationID: "st-1"}

type rig struct {
	corpus *knowledge.Corpus
	fake   *ragcorefake.Server
	srv    *httptest.Server
	logs   *bytes.Buffer
	mu     sync.Mutex
}

func newRig(t testing.TB, corpus *knowledge.Corpus) *rig {
	t.Helper()
	if corpus == nil {
		var err error
		if corpus, err = knowledge.Embedded(); err != nil {
			t.Fatal(err)
		}
	}
	fake := ragcorefake.New(ragcorefake.Options{Token: token})
	fake.LoadCorpus(corpus, "mobilityops-procedures")
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return &rig{corpus: corpus, fake: fake, srv: srv, logs: &bytes.Buffer{}}
}

func (r *rig) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.logs.Write(p)
}

// service builds one status service ("one process") over the rig's RAGcore and the records.
func (r *rig) service(t testing.TB, records status.Records, o status.Options) *status.Service {
	t.Helper()
	c, err := ragcore.New(ragcore.Options{BaseURL: r.srv.URL, Token: token, Timeout: 2 * time.Second,
		Namespace: ns, // the one namespace type
		// These tests are about verification, not the breaker: it never opens here.
		Breaker: ragcore.BreakerOptions{Failures: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	p := ragcore.NewProvider(c, r.corpus, ragcore.ProviderOptions{})
	o.Namespace = ns
	return status.New(r.corpus, p, p, records, o, slog.New(slog.NewJSONHandler(r, nil)))
}

func (r *rig) lookups() int { return r.fake.Count(http.MethodGet, "/v1/documents") }

func TestAllVerified(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	s := r.service(t, store.NewMemory(), status.Options{})
	for _, lang := range knowledge.Languages {
		st, err := s.Status(context.Background(), lang, reader)
		if err != nil {
			t.Fatal(err)
		}
		if st.SourceDocumentCount != 11 || st.DocumentCount == nil || *st.DocumentCount != 11 ||
			st.StatisticsState != status.StateVerified || len(st.Verification.Missing) != 0 || !st.Verification.Complete ||
			st.Verification.Cache.Hit || st.Verification.Cache.TTLSeconds != 300 {
			t.Errorf("%s: %+v", lang, st)
		}
		if st.ReportedSynced != nil || st.LastSyncAt != nil || st.SyncReportState != "none" {
			t.Errorf("%s: reported figures before any report: %+v", lang, st)
		}
	}
	for _, req := range r.fake.Requests() {
		if req.ActorID != "console-1" || req.CorrelationID != "st-1" || req.Tenant != ns.Tenant || !req.Authorized {
			t.Fatalf("lookup identity %+v", req)
		}
	}
}

// TestNineOfElevenPublished: with two of the eleven sources not there, the count is 9, and a
// second call within five minutes sends RAGcore nothing.
func TestNineOfElevenPublished(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	r.fake.Remove("mobilityops-procedures-en", "lost-and-found")
	r.fake.SetVersionStatus("mobilityops-procedures-en", "ev-charging", ragcorefake.VersionProcessing)
	s := r.service(t, store.NewMemory(), status.Options{})
	st, err := s.Status(context.Background(), "en", reader)
	if err != nil {
		t.Fatal(err)
	}
	if st.SourceDocumentCount != 11 || st.DocumentCount == nil || *st.DocumentCount != 9 || st.StatisticsState != status.StateVerified ||
		!slices.Equal(st.Verification.Missing, []string{"ev-charging", "lost-and-found"}) {
		t.Fatalf("status %+v", st)
	}
	before := r.lookups()
	if before != 11 {
		t.Errorf("%d identity lookups, want one per source (11)", before)
	}
	st, _ = s.Status(context.Background(), "en", reader)
	if r.lookups() != before || !st.Verification.Cache.Hit || *st.DocumentCount != 9 {
		t.Errorf("second call: %d new lookups, cache %+v", r.lookups()-before, st.Verification.Cache)
	}
	// RAGcore got the one lookup per source and nothing else.
	if got := len(r.fake.Requests()); got != 11 {
		t.Errorf("%d requests to RAGcore in all", got)
	}
}

func TestEveryReasonNotToCount(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	src := "mobilityops-procedures-en"
	r.fake.Remove(src, "lost-and-found")
	r.fake.SetDocumentStatus(src, "damage-procedure", ragcorefake.StatusArchived)
	r.fake.SetVersionStatus(src, "ev-charging", ragcorefake.VersionProcessing)
	r.fake.Duplicate(src, "accident-procedure")
	r.fake.MoveToNamespace(src, "vehicle-cleaning", ns.Tenant, "another-workspace", ns.Collection)
	s := r.service(t, store.NewMemory(), status.Options{})
	st, err := s.Status(context.Background(), "en", reader)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"lost-and-found": ragcore.NotFound, "damage-procedure": ragcore.NotActive, "ev-charging": ragcore.NotPublished,
		"accident-procedure": ragcore.Duplicated, "vehicle-cleaning": ragcore.OtherNamespace,
	}
	got := map[string]string{}
	for _, o := range st.Verification.NotIndexed {
		got[o.DocumentID] = o.Reason
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("reasons %v, want %v", got, want)
	}
	if st.DocumentCount == nil || *st.DocumentCount != 6 || st.StatisticsState != status.StateVerified || st.Verification.Errors != 0 {
		t.Errorf("status %+v", st)
	}
}

func TestFailuresLeaveTheCountNull(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		faults ragcorefake.Faults
		errors int
		reason string
	}{
		{"every lookup times out", ragcorefake.Faults{Paths: []string{"/v1/documents"}, Latency: time.Minute}, 11, "timeout"},
		{"every lookup gets 500", ragcorefake.Faults{Paths: []string{"/v1/documents"}, ErrorRate: 1, ErrorStatus: 500}, 11, "unavailable"},
		{"one lookup gets 500", ragcorefake.Faults{Paths: []string{"/v1/documents"}, FailNext: 1, FailStatus: 500}, 1, "unavailable"},
		{"malformed answers", ragcorefake.Faults{Paths: []string{"/v1/documents"}, Malformed: true}, 11, "bad_response"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, nil)
			r.fake.SetFaults(tc.faults)
			records := store.NewMemory()
			// Only the hanging lookups may time out: a lookup the fake answers at once must not,
			// however loaded the machine, or the counts of the other cases would change.
			s := r.service(t, records, status.Options{RequestTimeout: 2 * time.Second, Budget: 10 * time.Second})
			st, err := s.Status(context.Background(), "en", reader)
			if err != nil {
				t.Fatal(err)
			}
			if st.DocumentCount != nil || st.StatisticsState != status.StateUnavailable || st.Verification.Complete ||
				st.Verification.Errors != tc.errors || len(st.Verification.Failed) != tc.errors ||
				st.Verification.Failed[0].Reason != tc.reason {
				t.Fatalf("status %+v", st)
			}
			// A partial result is not cached: the next call verifies again.
			if _, err := records.GetVerification(context.Background(), ns, "en"); err == nil {
				t.Error("an incomplete verification was cached")
			}
			r.fake.SetFaults(ragcorefake.Faults{})
			st, _ = s.Status(context.Background(), "en", reader)
			if st.DocumentCount == nil || *st.DocumentCount != 11 || st.Verification.Cache.Hit {
				t.Errorf("after recovery %+v", st)
			}
		})
	}
}

func TestBudgetBoundsAHangingRAGcore(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	r.fake.SetFaults(ragcorefake.Faults{Paths: []string{"/v1/documents"}, Latency: time.Minute})
	s := r.service(t, store.NewMemory(), status.Options{RequestTimeout: 10 * time.Second, Budget: 300 * time.Millisecond})
	// The invocation's own deadline cuts the budget further.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	st, _ := s.Status(ctx, "en", reader)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("status took %v with a 300 ms budget", took)
	}
	if st.DocumentCount != nil || st.StatisticsState != status.StateUnavailable || st.Verification.Errors != 11 {
		t.Errorf("status %+v", st)
	}
}

func TestCacheValidFor300Seconds(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	clock := storetest.NewClock(time.Now())
	s := r.service(t, store.NewMemoryAt(clock.Now), status.Options{Now: clock.Now})
	s.Status(context.Background(), "de", reader)
	clock.Advance(299 * time.Second)
	st, _ := s.Status(context.Background(), "de", reader)
	if r.lookups() != 11 || !st.Verification.Cache.Hit || st.Verification.Cache.AgeSeconds != 299 {
		t.Fatalf("at 299 s: %d lookups, cache %+v", r.lookups(), st.Verification.Cache)
	}
	clock.Advance(2 * time.Second)
	st, _ = s.Status(context.Background(), "de", reader)
	if r.lookups() != 22 || st.Verification.Cache.Hit {
		t.Fatalf("at 301 s: %d lookups, cache %+v", r.lookups(), st.Verification.Cache)
	}
}

// TestNoStampede sends 24 concurrent status calls through three services ("processes") that
// share one store: single-flight inside each, the lease across them. Every source is
// looked up exactly once.
func TestNoStampede(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	r.fake.SetFaults(ragcorefake.Faults{Paths: []string{"/v1/documents"}, Latency: 100 * time.Millisecond})
	records := store.NewMemory()
	var services []*status.Service
	for range 3 {
		services = append(services, r.service(t, records, status.Options{Concurrency: 4, Poll: 20 * time.Millisecond}))
	}
	var wg sync.WaitGroup
	counts := make([]*int, 24)
	for i := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := services[i%3].Status(context.Background(), "en", reader)
			if err != nil {
				t.Error(err)
				return
			}
			counts[i] = st.DocumentCount
		}()
	}
	wg.Wait()
	for i, c := range counts {
		if c == nil || *c != 11 {
			t.Fatalf("call %d: document_count %v", i, c)
		}
	}
	if n := r.lookups(); n != 11 {
		t.Errorf("%d identity lookups for 24 concurrent calls in 3 processes, want 11", n)
	}
}

func TestRefreshIgnoresTheCache(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	s := r.service(t, store.NewMemory(), status.Options{})
	s.Status(context.Background(), "en", reader)
	r.fake.Remove("mobilityops-procedures-en", "lost-and-found")
	v, err := s.Refresh(context.Background(), "en", reader)
	if err != nil || v.Confirmed != 10 || r.lookups() != 22 {
		t.Fatalf("refresh %+v, %v, %d lookups", v, err, r.lookups())
	}
	st, _ := s.Status(context.Background(), "en", reader)
	if !st.Verification.Cache.Hit || *st.DocumentCount != 10 {
		t.Errorf("status after refresh %+v", st)
	}
}

func TestSyncReportIsKeptApart(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	r.fake.Remove("mobilityops-procedures-en", "lost-and-found")
	records := store.NewMemory()
	finished := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	if _, err := records.PutSyncReport(context.Background(), ns, domain.SyncReport{RunID: "run-1", Language: "en",
		Synced: 11, Failed: 0, FinishedAt: finished}); err != nil {
		t.Fatal(err)
	}
	s := r.service(t, records, status.Options{})
	st, _ := s.Status(context.Background(), "en", reader)
	// The workflow says 11 synced; RAGcore confirms 10. Both are shown, neither replaces the other.
	if st.ReportedSynced == nil || *st.ReportedSynced != 11 || *st.ReportedFailed != 0 || !st.LastSyncAt.Equal(finished) ||
		*st.LastSyncRunID != "run-1" || st.SyncReportState != "received" || *st.DocumentCount != 10 {
		t.Errorf("status %+v", st)
	}
}

func TestDemoProviderCountsWhatItIndexed(t *testing.T) {
	t.Parallel()
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	p := demo.New(lexical.Build(c))
	s := status.New(c, p, p, store.NewMemory(), status.Options{Namespace: ns}, slog.New(slog.DiscardHandler))
	st, err := s.Status(context.Background(), "de", reader)
	if err != nil || st.Provider != "demo" || st.DocumentCount == nil || *st.DocumentCount != 11 || st.StatisticsState != status.StateVerified {
		t.Fatalf("demo status %+v, %v", st, err)
	}
	if _, err := s.Status(context.Background(), "fr", reader); err == nil {
		t.Error("fr accepted")
	}
}

func TestLogsNameNoToken(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	r.fake.SetFaults(ragcorefake.Faults{Paths: []string{"/v1/documents"}, ErrorRate: 1})
	s := r.service(t, store.NewMemory(), status.Options{})
	s.Status(context.Background(), "en", reader)
	r.mu.Lock()
	defer r.mu.Unlock()
	if logs := r.logs.String(); strings.Contains(logs, token) || strings.Contains(logs, r.srv.URL) || !strings.Contains(logs, `"errors":11`) {
		t.Errorf("logs: %s", logs)
	}
}

// TestCacheOfAnotherCorpusIsNotUsed: after a deploy that changes a procedure's version (same
// count), the cached result of the old corpus is not reported as this one's.
func TestCacheOfAnotherCorpusIsNotUsed(t *testing.T) {
	t.Parallel()
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	next := testutil.WriteCorpus(t, func(lang string) map[string]string {
		files := map[string]string{}
		for _, d := range c.Documents(lang) {
			raw := string(d.Raw)
			if d.ID == "damage-procedure" {
				raw = strings.Replace(raw, "version: \""+d.Version+"\"", "version: \"9.9\"", 1)
				raw = strings.Replace(raw, "version: "+d.Version+"\n", "version: \"9.9\"\n", 1)
			}
			files[d.ID] = raw
		}
		return files
	})
	if next.Document("en", "damage-procedure").Version != "9.9" {
		t.Fatal("the changed corpus did not change")
	}
	records := store.NewMemory()
	before := newRig(t, c)
	before.service(t, records, status.Options{}).Status(context.Background(), "en", reader)
	after := newRig(t, next)
	st, _ := after.service(t, records, status.Options{}).Status(context.Background(), "en", reader)
	if st.Verification.Cache.Hit || after.lookups() != 11 {
		t.Fatalf("the new corpus used the old corpus's cache: %+v, %d lookups", st.Verification.Cache, after.lookups())
	}
}

// TestNegativeCache: a verification that did not complete is answered again within the negative
// TTL without a single identity lookup, never as verified, and RAGcore is asked again after it.
func TestNegativeCache(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	clock := storetest.NewClock(time.Now())
	r.fake.SetFaults(ragcorefake.Faults{Paths: []string{"/v1/documents"}, ErrorRate: 1, ErrorStatus: 500})
	records := store.NewMemoryAt(clock.Now)
	s := r.service(t, records, status.Options{Now: clock.Now, NegativeTTL: 30 * time.Second})
	unavailable := func(st domain.Status) bool {
		return st.DocumentCount == nil && st.StatisticsState == status.StateUnavailable && !st.Verification.Complete &&
			st.Verification.Errors == 11 && st.Verification.Confirmed == 0
	}
	st, err := s.Status(context.Background(), "en", reader)
	if err != nil || !unavailable(st) || st.Verification.Cache.Hit {
		t.Fatalf("first status %+v, %v", st, err)
	}
	first := r.lookups()
	if first != 11 {
		t.Fatalf("%d identity lookups for the first status, want 11", first)
	}
	// RAGcore recovers meanwhile: within the TTL the failed result stands, with no lookup.
	r.fake.SetFaults(ragcorefake.Faults{})
	clock.Advance(29 * time.Second)
	st, _ = s.Status(context.Background(), "en", reader)
	if !unavailable(st) || !st.Verification.Cache.Hit || !st.Verification.Cache.Negative ||
		st.Verification.Cache.TTLSeconds != 30 || st.Verification.Cache.AgeSeconds != 29 {
		t.Fatalf("second status within the TTL %+v", st)
	}
	if n := r.lookups(); n != first {
		t.Fatalf("%d identity lookups for a status within the negative TTL, want none", n-first)
	}
	if _, err := records.GetVerification(context.Background(), ns, "en"); err == nil {
		t.Error("a failed verification reached the store")
	}
	// The other language has its own entry.
	if st, _ := s.Status(context.Background(), "de", reader); st.DocumentCount == nil || r.lookups() != first+11 {
		t.Fatalf("German status %+v after %d lookups", st, r.lookups()-first)
	}
	// After the TTL RAGcore is asked again, and a complete result replaces the failed one.
	clock.Advance(2 * time.Second)
	st, _ = s.Status(context.Background(), "en", reader)
	if st.DocumentCount == nil || *st.DocumentCount != 11 || st.StatisticsState != status.StateVerified ||
		st.Verification.Cache.Hit || st.Verification.Cache.Negative || r.lookups() != first+22 {
		t.Fatalf("status after the TTL %+v, %d lookups", st, r.lookups()-first)
	}
	// A forced refresh ignores the negative cache too.
	r.fake.SetFaults(ragcorefake.Faults{Paths: []string{"/v1/documents"}, ErrorRate: 1, ErrorStatus: 500})
	clock.Advance(301 * time.Second) // past the 300 s positive cache
	if st, _ := s.Status(context.Background(), "en", reader); !unavailable(st) || r.lookups() != first+33 {
		t.Fatalf("status in the second outage %+v", st)
	}
	if v, _ := s.Refresh(context.Background(), "en", reader); v.Complete || r.lookups() != first+44 {
		t.Fatalf("refresh %+v after %d lookups: it must ask RAGcore", v, r.lookups()-first)
	}
}

// TestNegativeCacheOff: without a TTL every status asks RAGcore again (the library default).
func TestNegativeCacheOff(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	r.fake.SetFaults(ragcorefake.Faults{Paths: []string{"/v1/documents"}, ErrorRate: 1, ErrorStatus: 500})
	s := r.service(t, store.NewMemory(), status.Options{})
	for range 2 {
		if st, _ := s.Status(context.Background(), "en", reader); st.DocumentCount != nil || st.Verification.Cache.Hit {
			t.Fatalf("status %+v", st)
		}
	}
	if n := r.lookups(); n != 22 {
		t.Errorf("%d identity lookups, want 22", n)
	}
}

// TestStatusBodyCarriesNoInternalField: the cache's corpus fingerprint (and any other field of the
// record that the response does not name) never reaches a /status body.
func TestStatusBodyCarriesNoInternalField(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	s := r.service(t, store.NewMemory(), status.Options{})
	for range 2 { // a miss, then a cache hit read back from the record
		st, err := s.Status(context.Background(), "en", reader)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Verification map[string]any `json:"verification"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatal(err)
		}
		want := []string{"cache", "checked", "complete", "confirmed", "duration_ms", "errors", "failed", "missing", "not_indexed", "outdated", "verified_at"}
		got := slices.Sorted(maps.Keys(body.Verification))
		if !slices.Equal(got, want) || strings.Contains(string(b), "fingerprint") {
			t.Errorf("verification fields %v, want %v; body %s", got, want, b)
		}
	}
}
