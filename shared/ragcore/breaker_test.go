package ragcore_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ragcorefake"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/obs"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/ragcore"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// breakerEnv is a provider with a small breaker (3 failures, cool-down cooldown) over the fake.
type breakerEnv struct {
	fake     *ragcorefake.Server
	srv      *httptest.Server // nil in process
	base     string
	provider *ragcore.Provider
	out      *testutil.SyncBuffer // logs and EMF metrics
}

func newBreakerEnv(t *testing.T, cooldown time.Duration) *breakerEnv {
	t.Helper()
	fake := ragcorefake.New(ragcorefake.Options{Token: token, Seed: 1})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return newBreakerEnvOn(t, fake, srv.URL, srv, nil, cooldown)
}

// newInProcessBreakerEnv serves the fake through an http.RoundTripper that calls its handler in
// the process, without a socket: the environment of a test in a synctest bubble, where network
// I/O would not let the bubble's clock move.
func newInProcessBreakerEnv(t *testing.T, cooldown time.Duration) *breakerEnv {
	t.Helper()
	fake := ragcorefake.New(ragcorefake.Options{Token: token, Seed: 1})
	return newBreakerEnvOn(t, fake, "http://ragcore.invalid", nil, inProcess{fake}, cooldown)
}

func newBreakerEnvOn(t *testing.T, fake *ragcorefake.Server, base string, srv *httptest.Server, rt http.RoundTripper,
	cooldown time.Duration) *breakerEnv {
	t.Helper()
	c := corpus(t)
	fake.LoadCorpus(c, "mobilityops-procedures")
	out := &testutil.SyncBuffer{}
	o := ragcore.Options{BaseURL: base, Token: token, Namespace: ns, Timeout: 5 * time.Second,
		Breaker: ragcore.BreakerOptions{Failures: 3, Cooldown: cooldown},
		Log:     slog.New(slog.NewJSONHandler(out, nil)), Metrics: obs.NewEMF(out, "test")}
	if rt != nil {
		o.HTTPClient = &http.Client{Timeout: o.Timeout, Transport: rt}
	}
	client, err := ragcore.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return &breakerEnv{fake: fake, srv: srv, base: base, out: out, provider: ragcore.NewProvider(client, c, ragcore.ProviderOptions{})}
}

// inProcess is an http.RoundTripper that serves every request with h in the calling goroutine.
type inProcess struct{ h http.Handler }

func (p inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	p.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

func (e *breakerEnv) retrieve(ctx context.Context) error {
	_, err := e.provider.Retrieve(ctx, port.Query{Question: "windscreen crack", Language: "en", TopK: 5, Actor: actor})
	return err
}

func (e *breakerEnv) retrieves() int { return e.fake.Count(http.MethodPost, "/v1/retrieve") }

func classOf(err error) string { return port.ErrorClass(err) }

// TestBreakerOpensFailsFastHalfOpensAndRecovers runs in a synctest bubble with the fake served
// in the process: the breaker's clock is the bubble's, which moves only while the test sleeps,
// so a machine slow between two steps cannot end a cool-down behind the test's back.
func TestBreakerOpensFailsFastHalfOpensAndRecovers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, breakerOpensFailsFastHalfOpensAndRecovers)
}

func breakerOpensFailsFastHalfOpensAndRecovers(t *testing.T) {
	const cooldown = 100 * time.Millisecond
	e := newInProcessBreakerEnv(t, cooldown)
	e.fake.SetFaults(ragcorefake.Faults{ErrorRate: 1, ErrorStatus: 500})
	for i := range 3 {
		if e.provider.BreakerOpen() {
			t.Fatalf("open after %d failures, want 3", i)
		}
		if err := e.retrieve(context.Background()); classOf(err) != ragcore.ClassUnavailable {
			t.Fatalf("failure %d: %v", i+1, err)
		}
	}
	if !e.provider.BreakerOpen() || e.retrieves() != 3 {
		t.Fatalf("after 3 failures: open %v, %d requests", e.provider.BreakerOpen(), e.retrieves())
	}
	// Open: every call fails at once, as unavailable, and RAGcore sees nothing of it.
	for range 20 {
		err := e.retrieve(context.Background())
		if classOf(err) != ragcore.ClassCircuitOpen || !errors.Is(err, port.ErrUnavailable) {
			t.Fatalf("while open: %v, want circuit_open wrapping ErrUnavailable", err)
		}
	}
	h := e.provider.Health(context.Background(), port.Call{Actor: actor})
	if h.Status != "unavailable" || !strings.Contains(h.Detail, "circuit_open") {
		t.Errorf("health while open: %+v", h)
	}
	if n := e.retrieves(); n != 3 || len(e.fake.Requests()) != 3 {
		t.Fatalf("RAGcore saw %d requests (%d retrieves) while the breaker was open, want the 3 before", len(e.fake.Requests()), n)
	}

	// After the cool-down one probe goes through; it fails, so the breaker opens again.
	time.Sleep(2 * cooldown)
	if err := e.retrieve(context.Background()); classOf(err) != ragcore.ClassUnavailable || e.retrieves() != 4 {
		t.Fatalf("probe: %v, %d requests", err, e.retrieves())
	}
	if err := e.retrieve(context.Background()); classOf(err) != ragcore.ClassCircuitOpen || e.retrieves() != 4 {
		t.Fatalf("after a failed probe: %v, %d requests; want open again", err, e.retrieves())
	}

	// RAGcore recovers: the next probe succeeds and closes the breaker.
	e.fake.SetFaults(ragcorefake.Faults{})
	time.Sleep(2 * cooldown)
	if !e.provider.BreakerOpen() {
		t.Error("half-open must still report the breaker open until the probe succeeds")
	}
	if err := e.retrieve(context.Background()); err != nil {
		t.Fatalf("probe after recovery: %v", err)
	}
	if e.provider.BreakerOpen() || e.retrieves() != 5 {
		t.Fatalf("after a good probe: open %v, %d requests", e.provider.BreakerOpen(), e.retrieves())
	}
	for range 3 {
		if err := e.retrieve(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if e.retrieves() != 8 {
		t.Errorf("%d requests after closing, want 8", e.retrieves())
	}

	// Every change was logged at warn and recorded as BreakerOpen: open, half-open, open,
	// half-open, closed.
	out := e.out.String()
	var states []string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(line, `"level":"WARN"`) && strings.Contains(line, `"breaker_to"`):
			to := line[strings.Index(line, `"breaker_to":"`)+len(`"breaker_to":"`):]
			states = append(states, to[:strings.Index(to, `"`)])
		}
	}
	if got := strings.Join(states, ","); got != "open,half-open,open,half-open,closed" {
		t.Errorf("state changes logged: %s\n%s", got, out)
	}
	if strings.Count(out, `"BreakerOpen":1`) != 4 || strings.Count(out, `"BreakerOpen":0`) != 1 ||
		!strings.Contains(out, `"Name":"BreakerOpen"`) {
		t.Errorf("BreakerOpen metric lines:\n%s", out)
	}
	if strings.Contains(out, token) || strings.Contains(out, e.base) {
		t.Errorf("logs name the token or the address:\n%s", out)
	}
}

func TestBreakerIgnoresClientErrorsAndCancellation(t *testing.T) {
	t.Parallel()
	e := newBreakerEnv(t, time.Minute)
	for _, status := range []int{400, 401, 403, 404, 409, 429} {
		e.fake.SetFaults(ragcorefake.Faults{FailNext: 100, FailStatus: status, RetryAfter: "60"})
		for range 5 {
			// The deadline makes the client give up on a 429 at once rather than wait 60 s.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := e.retrieve(ctx)
			cancel()
			if err == nil || classOf(err) == ragcore.ClassCircuitOpen || classOf(err) == ragcore.ClassTimeout {
				t.Fatalf("HTTP %d: %v", status, err)
			}
		}
		if e.provider.BreakerOpen() {
			t.Fatalf("HTTP %d five times opened the breaker", status)
		}
	}
	// Callers that go away are not RAGcore's failures.
	e.fake.SetFaults(ragcorefake.Faults{Latency: 20 * time.Second})
	for range 5 {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		if err := e.retrieve(ctx); classOf(err) != ragcore.ClassCanceled {
			t.Fatalf("canceled caller: %v", err)
		}
	}
	if e.provider.BreakerOpen() {
		t.Fatal("canceled callers opened the breaker")
	}
	// Timeouts are.
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err := e.retrieve(ctx)
		cancel()
		if classOf(err) != ragcore.ClassTimeout {
			t.Fatalf("hanging RAGcore: %v", err)
		}
	}
	if !e.provider.BreakerOpen() {
		t.Fatal("three timeouts did not open the breaker")
	}
	before := len(e.fake.Requests())
	if err := e.retrieve(context.Background()); classOf(err) != ragcore.ClassCircuitOpen || len(e.fake.Requests()) != before {
		t.Fatalf("while open: %v, %d new requests", err, len(e.fake.Requests())-before)
	}
}

// TestLookupWhileTheBreakerIsOpen: with RAGcore stopped, the lookups that open the breaker and
// those after it report l1 "unavailable"; the later ones with class circuit_open, answered from L0.
func TestLookupWhileTheBreakerIsOpen(t *testing.T) {
	t.Parallel()
	e := newBreakerEnv(t, time.Minute)
	o := retrieval.DefaultOptions()
	o.ProviderTimeout = 5 * time.Second
	svc := retrieval.New(lexical.Build(corpus(t)), e.provider, store.NewMemory(), o, slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil)))
	e.srv.Close()
	var classes []string
	for range 5 {
		res, err := svc.Lookup(context.Background(), lookup.LookupRequest{Question: "The windscreen has a crack, how do I report the damage?",
			Language: "en", TopK: 5, Actor: actor, CorrelationID: "corr-b"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Retrieval.L1.Status != lookup.L1Unavailable || res.Primary == nil || res.Primary.DocumentID != "damage-procedure" {
			t.Fatalf("l1 %+v, primary %+v", res.Retrieval.L1, res.Primary)
		}
		classes = append(classes, res.Retrieval.L1.ErrorClass)
	}
	if got := strings.Join(classes, ","); got != "unavailable,unavailable,unavailable,circuit_open,circuit_open" {
		t.Errorf("error classes %s", got)
	}
}
