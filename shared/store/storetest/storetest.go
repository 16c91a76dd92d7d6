// Package storetest is the conformance suite every store.Records implementation passes: the
// in-memory store in unit tests and the DynamoDB store against DynamoDB Local.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// Clock is a settable clock for expiry tests.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Factory returns a fresh, empty store on the given clock.
type Factory func(t *testing.T, now func() time.Time) store.Records

var ns = domain.Namespace{Tenant: config.DefaultTenant, Workspace: config.DefaultWorkspace, Collection: config.DefaultCollection}

// Run runs the conformance suite.
func Run(t *testing.T, newStore Factory) {
	t.Run("TraceRoundTrip", func(t *testing.T) { t.Parallel(); traceRoundTrip(t, newStore) })
	t.Run("PutTraceIfAbsentStoresOnce", func(t *testing.T) { t.Parallel(); traceOnce(t, newStore) })
	t.Run("TraceExpiryIsCheckedOnRead", func(t *testing.T) { t.Parallel(); traceExpiry(t, newStore) })
	t.Run("VerificationCacheValidFor300s", func(t *testing.T) { t.Parallel(); verificationCache(t, newStore) })
	t.Run("VerificationCacheKeyedByNamespaceAndLanguage", func(t *testing.T) { t.Parallel(); verificationKeys(t, newStore) })
	t.Run("SyncReportStoredOncePerRunID", func(t *testing.T) { t.Parallel(); reportOnce(t, newStore) })
	t.Run("OneRunReportsEveryLanguage", func(t *testing.T) { t.Parallel(); reportLanguages(t, newStore) })
	t.Run("OlderSyncReportNeverReplacesNewer", func(t *testing.T) { t.Parallel(); reportOrder(t, newStore) })
	t.Run("SyncReportTieBreaksByRunID", func(t *testing.T) { t.Parallel(); reportTie(t, newStore) })
	t.Run("SyncReportsOrderAcrossEveryYear", func(t *testing.T) { t.Parallel(); reportYears(t, newStore) })
	t.Run("SyncReportRejectsInvalid", func(t *testing.T) { t.Parallel(); reportInvalid(t, newStore) })
	t.Run("ConcurrentSameRunIDStoredExactlyOnce", func(t *testing.T) { t.Parallel(); concurrentSameRun(t, newStore) })
	t.Run("ConcurrentCompetingReportsNewestWins", func(t *testing.T) { t.Parallel(); concurrentCompeting(t, newStore) })
	t.Run("LatestFlagExactUnderRacingCopies", func(t *testing.T) { t.Parallel(); latestUnderRace(t, newStore) })
	t.Run("LeaseHasOneOwnerUntilItExpires", func(t *testing.T) { t.Parallel(); leaseOwner(t, newStore) })
	t.Run("ConcurrentLeaseHasExactlyOneWinner", func(t *testing.T) { t.Parallel(); leaseConcurrent(t, newStore) })
}

// t0 is the suites' clock start. It lies in the future on purpose: DynamoDB Local runs the TTL
// sweeper, which would delete items whose expires_at, computed from a clock in the past, has
// gone by in real time, and make expiry tests pass or fail by the sweeper's timing.
var t0 = time.Date(2099, 11, 29, 18, 0, 0, 0, time.UTC)

func sampleTrace(id string, created time.Time) lookup.Trace {
	return lookup.Trace{
		InvocationID: id, Tool: lookup.ToolLookup, CreatedAt: created, ActorID: "agent-7",
		QuestionSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", QuestionChars: 42, Language: "de",
		ExpiresAt: created.Add(30 * 24 * time.Hour),
		RetrievalDetails: lookup.TraceDetails{
			Layer: lookup.LayerBoth, EvidenceState: port.StateGrounded,
			L0:             lookup.L0Hints{MatchedTitles: []string{}, MatchedKeywords: []string{"kratzer", "delle"}, Domains: []string{"damage"}, Entities: []string{}},
			L1:             lookup.L1Details{Status: lookup.L1OK, Provider: "demo", CategoryFilter: strPtr("damage"), CandidateCount: 4, ScoreKind: "bm25"},
			CandidateCount: 5, FinalBlockCount: 3,
			EvidenceSummaries: []lookup.BlockSummary{{Source: "procedures/de/damage-procedure.md#2-sofortmaßnahmen", Title: "Schadensbearbeitung",
				RetrievalLayer: lookup.LayerBoth, Score: &port.Score{Value: 7.4123, Kind: "bm25", HigherIsBetter: true},
				HitReasons: []string{"l0:keyword:kratzer", "l1:bm25"}, Content: "Der Kunde meldet den Schaden …"},
				{Source: "procedures/de/damage-procedure.md#1-geltungsbereich", Title: "Schadensbearbeitung",
					RetrievalLayer: lookup.LayerL1, HitReasons: []string{"l1:answer"}, Content: "Diese Anweisung …"}},
			Sidecar:   lookup.SidecarStatus{Status: domain.SidecarDisabled},
			LatencyMs: lookup.Latency{L0: 0.05, L1: 0.021, Total: 0.12},
		},
	}
}

func strPtr(s string) *string { return &s }

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func traceRoundTrip(t *testing.T, newStore Factory) {
	clock := NewClock(t0)
	s := newStore(t, clock.Now)
	ctx := context.Background()
	want := sampleTrace("INV1", t0)
	if err := s.PutTrace(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTrace(ctx, "INV1")
	if err != nil {
		t.Fatal(err)
	}
	if asJSON(t, got) != asJSON(t, want) {
		t.Fatalf("trace changed in the store:\n got %s\nwant %s", asJSON(t, got), asJSON(t, want))
	}
	if _, err := s.GetTrace(ctx, "NOPE"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown trace: %v", err)
	}
	if err := s.PutTrace(ctx, lookup.Trace{}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("trace without id: %v", err)
	}
}

func traceOnce(t *testing.T, newStore Factory) {
	s := newStore(t, NewClock(t0).Now)
	ctx := context.Background()
	tr := sampleTrace("ONCE", t0)
	if ok, err := s.PutTraceIfAbsent(ctx, tr); err != nil || !ok {
		t.Fatalf("first put: %v %v", ok, err)
	}
	other := tr
	other.ActorID = "agent-2"
	if ok, err := s.PutTraceIfAbsent(ctx, other); err != nil || ok {
		t.Fatalf("second put: %v %v, want already present", ok, err)
	}
	if got, err := s.GetTrace(ctx, "ONCE"); err != nil || got.ActorID != "agent-7" {
		t.Fatalf("stored trace %+v %v: the second put replaced the first", got, err)
	}
	if _, err := s.PutTraceIfAbsent(ctx, lookup.Trace{}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("trace without id: %v", err)
	}
}

func traceExpiry(t *testing.T, newStore Factory) {
	clock := NewClock(t0)
	s := newStore(t, clock.Now)
	ctx := context.Background()
	tr := sampleTrace("INV2", t0)
	tr.ExpiresAt = t0.Add(time.Hour)
	if err := s.PutTrace(ctx, tr); err != nil {
		t.Fatal(err)
	}
	clock.Advance(59 * time.Minute)
	if _, err := s.GetTrace(ctx, "INV2"); err != nil {
		t.Fatalf("trace gone before its expiry: %v", err)
	}
	clock.Advance(time.Minute)
	if _, err := s.GetTrace(ctx, "INV2"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("expired trace still readable: %v", err)
	}
}

func verificationCache(t *testing.T, newStore Factory) {
	clock := NewClock(t0)
	s := newStore(t, clock.Now)
	ctx := context.Background()
	if _, err := s.GetVerification(ctx, ns, "en"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("empty cache: %v", err)
	}
	v := store.Verification{VerificationResult: domain.VerificationResult{Checked: 11, Confirmed: 10,
		Missing: []string{"lost-and-found"}, Errors: 0, VerifiedAt: t0, Complete: true,
		NotIndexed: []domain.SourceOutcome{{DocumentID: "lost-and-found", Reason: "not_published"}},
		Failed:     []domain.SourceOutcome{}, DurationMs: 12.5}}
	if err := s.PutVerification(ctx, ns, "en", v); err != nil {
		t.Fatal(err)
	}
	clock.Advance(299 * time.Second)
	got, err := s.GetVerification(ctx, ns, "en")
	if err != nil {
		t.Fatalf("cache entry gone after 299 s: %v", err)
	}
	if asJSON(t, got.Verification) != asJSON(t, v) {
		t.Fatalf("verification changed: %s", asJSON(t, got.Verification))
	}
	if age := got.Age(clock.Now()); age != 299*time.Second {
		t.Fatalf("age %v", age)
	}
	clock.Advance(time.Second)
	if _, err := s.GetVerification(ctx, ns, "en"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("cache entry valid after 300 s: %v", err)
	}
	// A new result refreshes the entry.
	if err := s.PutVerification(ctx, ns, "en", v); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetVerification(ctx, ns, "en"); err != nil || got.Age(clock.Now()) != 0 {
		t.Fatalf("refreshed entry: %v age %v", err, got.Age(clock.Now()))
	}
}

func verificationKeys(t *testing.T, newStore Factory) {
	clock := NewClock(t0)
	s := newStore(t, clock.Now)
	ctx := context.Background()
	if err := s.PutVerification(ctx, ns, "en", store.Verification{VerificationResult: domain.VerificationResult{Checked: 11, Confirmed: 11, Missing: []string{}, Complete: true}}); err != nil {
		t.Fatal(err)
	}
	other := ns
	other.Collection = "other-collection"
	for _, c := range []struct {
		ns   domain.Namespace
		lang string
	}{{ns, "de"}, {other, "en"}} {
		if _, err := s.GetVerification(ctx, c.ns, c.lang); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("%+v/%s sees another key's entry: %v", c.ns, c.lang, err)
		}
	}
}

func report(run string, lang string, finished time.Time, synced int) domain.SyncReport {
	return domain.SyncReport{RunID: run, Language: lang, Synced: synced, Failed: 11 - synced, FinishedAt: finished}
}

func reportOnce(t *testing.T, newStore Factory) {
	clock := NewClock(t0)
	s := newStore(t, clock.Now)
	ctx := context.Background()
	res, err := s.PutSyncReport(ctx, ns, report("run-1", "en", t0, 11))
	if err != nil || res.Duplicate || !res.Latest {
		t.Fatalf("first report: %+v %v", res, err)
	}
	// The same report again is a plain duplicate, of the latest report.
	res, err = s.PutSyncReport(ctx, ns, report("run-1", "en", t0, 11))
	if err != nil || !res.Duplicate || res.Differs || !res.Latest {
		t.Fatalf("duplicate: %+v %v", res, err)
	}
	// The same run_id with other figures stores nothing and says they differ; the stored
	// report of run-1 is still the latest.
	res, err = s.PutSyncReport(ctx, ns, report("run-1", "en", t0.Add(time.Hour), 3))
	if err != nil || !res.Duplicate || !res.Differs || !res.Latest {
		t.Fatalf("conflicting duplicate: %+v %v", res, err)
	}
	latest, err := s.LatestSyncReport(ctx, ns, "en")
	if err != nil || latest.Synced != 11 || !latest.FinishedAt.Equal(t0) {
		t.Fatalf("latest %+v %v", latest, err)
	}
	all, err := s.SyncReports(ctx, ns)
	if err != nil || len(all) != 1 {
		t.Fatalf("audit %+v %v", all, err)
	}
	if _, err := s.LatestSyncReport(ctx, ns, "de"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("latest of another language: %v", err)
	}
}

func reportLanguages(t *testing.T, newStore Factory) {
	s := newStore(t, NewClock(t0).Now)
	ctx := context.Background()
	for _, lang := range []string{"en", "de"} {
		res, err := s.PutSyncReport(ctx, ns, report("run-all", lang, t0, 11))
		if err != nil || res.Duplicate || !res.Latest {
			t.Fatalf("%s: %+v %v", lang, res, err)
		}
	}
	for _, lang := range []string{"en", "de"} {
		if latest, err := s.LatestSyncReport(ctx, ns, lang); err != nil || latest.RunID != "run-all" || latest.Language != lang {
			t.Fatalf("latest %s: %+v %v", lang, latest, err)
		}
	}
	if all, _ := s.SyncReports(ctx, ns); len(all) != 2 || all[0].Language != "de" || all[1].Language != "en" {
		t.Fatalf("audit %+v", all)
	}
}

func reportOrder(t *testing.T, newStore Factory) {
	clock := NewClock(t0)
	s := newStore(t, clock.Now)
	ctx := context.Background()
	if _, err := s.PutSyncReport(ctx, ns, report("run-new", "en", t0, 11)); err != nil {
		t.Fatal(err)
	}
	res, err := s.PutSyncReport(ctx, ns, report("run-old", "en", t0.Add(-time.Hour), 9))
	if err != nil || res.Duplicate || res.Latest {
		t.Fatalf("older report: %+v %v", res, err)
	}
	latest, _ := s.LatestSyncReport(ctx, ns, "en")
	if latest.RunID != "run-new" {
		t.Fatalf("latest is %s", latest.RunID)
	}
	// Offsets do not fool the ordering: 19:30+02:00 is 17:30Z, older than 18:00Z.
	offset := report("run-offset", "en", time.Date(2026, 11, 29, 19, 30, 0, 0, time.FixedZone("", 2*3600)), 5)
	if res, _ := s.PutSyncReport(ctx, ns, offset); res.Latest {
		t.Fatal("a report older in UTC replaced the latest")
	}
	all, _ := s.SyncReports(ctx, ns)
	if len(all) != 3 {
		t.Fatalf("every report is kept for audit: %d", len(all))
	}
	res, err = s.PutSyncReport(ctx, ns, report("run-newer", "en", t0.Add(time.Minute), 10))
	if err != nil || !res.Latest {
		t.Fatalf("newer report: %+v %v", res, err)
	}
	// A duplicate of a report that is no longer the latest says so, and changes nothing.
	res, err = s.PutSyncReport(ctx, ns, report("run-new", "en", t0, 11))
	if err != nil || !res.Duplicate || res.Latest {
		t.Fatalf("duplicate of a replaced report: %+v %v", res, err)
	}
	if latest, _ := s.LatestSyncReport(ctx, ns, "en"); latest.RunID != "run-newer" || latest.Synced != 10 || latest.Failed != 1 {
		t.Fatalf("latest %+v", latest)
	}
}

func reportTie(t *testing.T, newStore Factory) {
	for _, order := range [][]string{{"run-a", "run-b"}, {"run-b", "run-a"}} {
		s := newStore(t, NewClock(t0).Now)
		for _, id := range order {
			if _, err := s.PutSyncReport(context.Background(), ns, report(id, "de", t0, 11)); err != nil {
				t.Fatal(err)
			}
		}
		if latest, _ := s.LatestSyncReport(context.Background(), ns, "de"); latest.RunID != "run-b" {
			t.Fatalf("order %v: latest %s, want run-b", order, latest.RunID)
		}
	}
}

// reportYears sends reports finished in years an int64 of nanoseconds cannot hold (before 1678,
// after 2262) beside ordinary ones, in rising order and shuffled: the latest is always the one
// that finished last. A report of 1600 then one of 2026 leaves 2026 the latest.
func reportYears(t *testing.T, newStore Factory) {
	parse := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	rising := []time.Time{ // in the order they finished
		parse("0001-01-01T00:00:00+01:00"), // 0000-12-31T23:00:00Z
		parse("0001-01-01T00:00:00.000000001Z"),
		parse("1600-06-01T12:00:00Z"),
		parse("1677-09-21T00:12:43.145224191Z"), // a nanosecond before int64 nanoseconds begin
		parse("1969-12-31T23:59:59Z"),
		parse("1969-12-31T23:59:59.5Z"),
		parse("1970-01-01T00:00:00Z"),
		parse("2026-12-01T18:00:00Z"),
		parse("2262-04-11T23:47:16.854775808Z"), // a nanosecond after they end
		parse("9999-12-31T23:59:59.999999999Z"),
	}
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {2, 7, 0, 9, 4, 1, 8, 6, 3, 5}} {
		s := newStore(t, NewClock(t0).Now)
		ctx := context.Background()
		newest := -1
		for _, i := range order {
			r := report(fmt.Sprintf("run-%d", i), "en", rising[i], 11)
			res, err := s.PutSyncReport(ctx, ns, r)
			if err != nil {
				t.Fatalf("report of %s: %v", rising[i].Format(time.RFC3339Nano), err)
			}
			if want := i > newest; res.Latest != want {
				t.Errorf("order %v: the report of %s says latest %v, want %v", order, rising[i].Format(time.RFC3339Nano), res.Latest, want)
			}
			newest = max(newest, i)
			latest, err := s.LatestSyncReport(ctx, ns, "en")
			if err != nil || latest.RunID != fmt.Sprintf("run-%d", newest) || !latest.FinishedAt.Equal(rising[newest]) {
				t.Fatalf("order %v: after the report of %s the latest is %s (%s) %v, want the report of %s", order,
					rising[i].Format(time.RFC3339Nano), latest.RunID, latest.FinishedAt.Format(time.RFC3339Nano), err,
					rising[newest].Format(time.RFC3339Nano))
			}
		}
	}
}

func reportInvalid(t *testing.T, newStore Factory) {
	s := newStore(t, NewClock(t0).Now)
	for _, r := range []domain.SyncReport{
		{RunID: "", Language: "en", FinishedAt: t0},
		{RunID: "run with spaces", Language: "en", FinishedAt: t0},
		{RunID: "r", Language: "", FinishedAt: t0},
		{RunID: "r", Language: "en", Synced: -1, FinishedAt: t0},
		{RunID: "r", Language: "en"},
	} {
		if _, err := s.PutSyncReport(context.Background(), ns, r); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%+v: %v", r, err)
		}
	}
}

func concurrentSameRun(t *testing.T, newStore Factory) {
	s := newStore(t, NewClock(t0).Now)
	const n = 24
	var wg sync.WaitGroup
	results := make([]domain.ReportResult, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = s.PutSyncReport(context.Background(), ns, report("run-same", "en", t0, 11))
		})
	}
	wg.Wait()
	stored := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("goroutine %d: %v", i, errs[i])
		}
		if !results[i].Duplicate {
			stored++
		}
	}
	if stored != 1 {
		t.Fatalf("%d goroutines stored the report, want exactly 1", stored)
	}
	if all, _ := s.SyncReports(context.Background(), ns); len(all) != 1 {
		t.Fatalf("audit holds %d reports", len(all))
	}
}

func concurrentCompeting(t *testing.T, newStore Factory) {
	s := newStore(t, NewClock(t0).Now)
	const n = 24
	order := rand.Perm(n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for _, i := range order {
		wg.Go(func() {
			_, errs[i] = s.PutSyncReport(context.Background(), ns,
				report(fmt.Sprintf("run-%02d", i), "en", t0.Add(time.Duration(i)*time.Minute), i%12))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("report %d: %v", i, err)
		}
	}
	latest, err := s.LatestSyncReport(context.Background(), ns, "en")
	if err != nil || latest.RunID != fmt.Sprintf("run-%02d", n-1) || !latest.FinishedAt.Equal(t0.Add((n-1)*time.Minute)) {
		t.Fatalf("latest %+v %v, want run-%02d", latest, err, n-1)
	}
	if all, _ := s.SyncReports(context.Background(), ns); len(all) != n {
		t.Fatalf("audit holds %d of %d reports", len(all), n)
	}
}

// latestUnderRace sends 24 copies of each new report at once, round after round, as a sync
// workflow's retries can: exactly one copy stores it, and since no newer report races, every
// answer (the stored copy's and each duplicate's) must say latest, as the store then holds it.
func latestUnderRace(t *testing.T, newStore Factory) {
	s := newStore(t, NewClock(t0).Now)
	const copies, rounds = 24, 60
	var storedFalse, noneTrue, duplicatesFalse []int
	for round := range rounds {
		r := report(fmt.Sprintf("run-race-%03d", round), "en", t0.Add(time.Duration(round)*time.Minute), 11)
		results := make([]domain.ReportResult, copies)
		errs := make([]error, copies)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range copies {
			wg.Go(func() {
				<-start
				results[i], errs[i] = s.PutSyncReport(context.Background(), ns, r)
			})
		}
		close(start)
		wg.Wait()
		stored, anyTrue, dupFalse := 0, false, 0
		for i, res := range results {
			if errs[i] != nil {
				t.Fatalf("round %d copy %d: %v", round, i, errs[i])
			}
			anyTrue = anyTrue || res.Latest
			switch {
			case !res.Duplicate:
				stored++
				if !res.Latest {
					storedFalse = append(storedFalse, round)
				}
			case res.Differs:
				t.Fatalf("round %d: a copy differs from itself", round)
			case !res.Latest:
				dupFalse++
			}
		}
		if stored != 1 {
			t.Fatalf("round %d: %d copies stored the report, want 1", round, stored)
		}
		if !anyTrue {
			noneTrue = append(noneTrue, round)
		}
		if dupFalse > 0 {
			duplicatesFalse = append(duplicatesFalse, round)
		}
		if latest, err := s.LatestSyncReport(context.Background(), ns, "en"); err != nil || latest.RunID != r.RunID {
			t.Fatalf("round %d: latest %+v %v, want %s", round, latest, err, r.RunID)
		}
	}
	if len(storedFalse) > 0 || len(noneTrue) > 0 || len(duplicatesFalse) > 0 {
		t.Errorf("of %d rounds, the stored copy said latest false in %v, no answer said latest in %v, "+
			"a duplicate said latest false in %v; the report was the latest after every call", rounds, storedFalse, noneTrue, duplicatesFalse)
	}
}

func leaseOwner(t *testing.T, newStore Factory) {
	clock := NewClock(t0)
	s := newStore(t, clock.Now)
	ctx := context.Background()
	acquire := func(owner string, want bool) {
		t.Helper()
		got, err := s.AcquireLease(ctx, "verify#en", owner, 5*time.Second)
		if err != nil || got != want {
			t.Fatalf("AcquireLease(%s) = %v, %v; want %v", owner, got, err, want)
		}
	}
	acquire("a", true)
	acquire("b", false)
	acquire("a", true) // the holder may renew
	clock.Advance(4 * time.Second)
	acquire("b", false)
	if err := s.ReleaseLease(ctx, "verify#en", "b"); err != nil { // not b's: no effect
		t.Fatal(err)
	}
	acquire("b", false)
	clock.Advance(2 * time.Second) // past a's renewed lease
	acquire("b", true)
	if err := s.ReleaseLease(ctx, "verify#en", "b"); err != nil {
		t.Fatal(err)
	}
	acquire("c", true)
	if ok, err := s.AcquireLease(ctx, "verify#de", "d", time.Second); err != nil || !ok {
		t.Fatalf("another lease name: %v, %v", ok, err)
	}
}

func leaseConcurrent(t *testing.T, newStore Factory) {
	s := newStore(t, NewClock(t0).Now)
	var wg sync.WaitGroup
	var mu sync.Mutex
	winners := 0
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := s.AcquireLease(context.Background(), "verify#en", fmt.Sprintf("owner-%d", i), 10*time.Second)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				winners++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if winners != 1 {
		t.Fatalf("%d owners hold the lease", winners)
	}
}
