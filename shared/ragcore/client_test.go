package ragcore

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

const testToken = "s3cr3t-token-value"

var testNS = domain.Namespace{Tenant: "northstar-mobility-demo", Workspace: "mobilityops", Collection: "internal-procedures"}

// scripted answers each request with the next reply of a script (the last one repeats) and
// records the requests.
type scripted struct {
	mu      sync.Mutex
	replies []reply
	got     []*http.Request
}

type reply struct {
	status int
	body   string
	header map[string]string
	delay  time.Duration
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body) // the server notices a client that hangs up only once the body is read
	s.mu.Lock()
	rep := s.replies[min(len(s.got), len(s.replies)-1)]
	s.got = append(s.got, r.Clone(context.Background()))
	s.mu.Unlock()
	if rep.delay > 0 {
		select {
		case <-time.After(rep.delay):
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.status)
	w.Write([]byte(rep.body))
}

func (s *scripted) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got)
}

func newTestClient(t *testing.T, h http.Handler, o Options) *Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	o.BaseURL, o.Token, o.Namespace = srv.URL, testToken, testNS
	if o.Timeout == 0 {
		o.Timeout = time.Second
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	c.jitter = func(d time.Duration) time.Duration { return d } // deterministic waits
	return c
}

var testActor = Actor{ID: "agent-7", Scopes: []string{"knowledge:read", "knowledge:sync"}, CorrelationID: "corr-1"}

const okRetrieve = `{"score_semantics":"cosine_similarity","candidates":[{"source_id":"mobilityops-procedures-en",
"external_id":"damage-procedure","document_id":"rc-1","version":"1.3","title":"Damage handling procedure",
"breadcrumb":["Damage handling procedure","2. Immediate actions"],"section":"2. Immediate actions",
"category":"damage","content":"Take photos.","score":0.83,"rank":1}]}`

func TestEveryRequestCarriesNamespaceActorAndToken(t *testing.T) {
	t.Parallel()
	s := &scripted{replies: []reply{{status: 200, body: okRetrieve}}}
	c := newTestClient(t, s, Options{})
	if _, err := c.Retrieve(context.Background(), testActor, RetrieveRequest{Collection: "internal-procedures",
		Query: "scratch", Language: "en", TopK: 5}); err != nil {
		t.Fatal(err)
	}
	r := s.got[0]
	want := map[string]string{
		"Authorization": "Bearer " + testToken, "X-RAGcore-Tenant": testNS.Tenant, "X-RAGcore-Workspace": testNS.Workspace,
		"X-Actor-Id": "agent-7", "X-Actor-Scope": "knowledge:read knowledge:sync", "X-Correlation-Id": "corr-1",
		"Content-Type": "application/json",
	}
	for k, v := range want {
		if got := r.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/retrieve" {
		t.Errorf("request = %s %s", r.Method, r.URL.Path)
	}
}

func TestErrorClasses(t *testing.T) {
	t.Parallel()
	errBody := func(code string) string {
		return `{"error":{"code":"` + code + `","message":"token ` + testToken + ` at internal-host-7"}}`
	}
	cases := []struct {
		name   string
		reply  reply
		class  string
		status int
	}{
		{"400", reply{status: 400, body: errBody("invalid_request")}, ClassRejected, 400},
		{"401", reply{status: 401, body: errBody("unauthorized")}, ClassUnauthorized, 401},
		{"403", reply{status: 403, body: errBody("forbidden")}, ClassUnauthorized, 403},
		{"404", reply{status: 404, body: errBody("not_found")}, ClassRejected, 404},
		{"409", reply{status: 409, body: errBody("conflict")}, ClassRejected, 409},
		{"429", reply{status: 429, body: errBody("rate_limited"), header: map[string]string{"Retry-After": "0"}}, ClassUnavailable, 429},
		{"500", reply{status: 500, body: errBody("internal")}, ClassUnavailable, 500},
		{"503", reply{status: 503, body: errBody("unavailable")}, ClassUnavailable, 503},
		{"418 is outside the contract", reply{status: 418, body: `{}`}, ClassBadResponse, 418},
		{"201 is not the contract's success", reply{status: 201, body: okRetrieve}, ClassBadResponse, 201},
		{"not JSON", reply{status: 200, body: `<html>gateway</html>`}, ClassBadResponse, 200},
		{"trailing data", reply{status: 200, body: okRetrieve + `{}`}, ClassBadResponse, 200},
		{"wrong type", reply{status: 200, body: `{"score_semantics":"cosine_similarity","candidates":"none"}`}, ClassBadResponse, 200},
		{"missing score", reply{status: 200, body: strings.Replace(okRetrieve, `"score":0.83,`, "", 1)}, ClassBadResponse, 200},
		{"missing candidates", reply{status: 200, body: `{"score_semantics":"cosine_similarity"}`}, ClassBadResponse, 200},
		{"error body not JSON", reply{status: 502, body: `Bad Gateway`}, ClassUnavailable, 502},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newTestClient(t, &scripted{replies: []reply{tc.reply}}, Options{MaxAttempts: 1})
			_, err := c.Retrieve(context.Background(), testActor, RetrieveRequest{Query: "q", Language: "en", TopK: 1})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.Class != tc.class || e.Status != tc.status || e.Op != "retrieve" {
				t.Errorf("error = %+v, want class %s status %d", e, tc.class, tc.status)
			}
			if msg := err.Error(); strings.Contains(msg, testToken) || strings.Contains(msg, "internal-host-7") ||
				strings.Contains(msg, "127.0.0.1") {
				t.Errorf("error text leaks: %q", msg)
			}
		})
	}
}

func TestResponseSizeLimit(t *testing.T) {
	t.Parallel()
	big := `{"score_semantics":"cosine_similarity","candidates":[],"pad":"` + strings.Repeat("x", 2048) + `"}`
	c := newTestClient(t, &scripted{replies: []reply{{status: 200, body: big}}}, Options{MaxResponseBytes: 1024})
	_, err := c.Retrieve(context.Background(), testActor, RetrieveRequest{})
	var e *Error
	if !errors.As(err, &e) || e.Class != ClassBadResponse || !strings.Contains(err.Error(), "over 1024 bytes") {
		t.Fatalf("err = %v", err)
	}
}

func TestUnknownFieldsAreTolerated(t *testing.T) {
	t.Parallel()
	body := strings.Replace(okRetrieve, `"rank":1}`, `"rank":1,"chunk_id":"c-9"}`, 1)
	c := newTestClient(t, &scripted{replies: []reply{{status: 200, body: body}}}, Options{})
	r, err := c.Retrieve(context.Background(), testActor, RetrieveRequest{})
	if err != nil || len(r.Candidates) != 1 || *r.Candidates[0].Score != 0.83 {
		t.Fatalf("r = %+v, err = %v", r, err)
	}
}

func TestRetriesOnlyRateLimitAndUnavailable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status   int
		attempts int
	}{{429, 3}, {503, 3}, {500, 1}, {502, 1}, {400, 1}, {401, 1}}
	for _, tc := range cases {
		s := &scripted{replies: []reply{{status: tc.status, body: `{"error":{"code":"x","message":"y"}}`}}}
		c := newTestClient(t, s, Options{})
		var slept []time.Duration
		c.sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
		_, err := c.Retrieve(context.Background(), testActor, RetrieveRequest{})
		if err == nil || s.count() != tc.attempts {
			t.Errorf("HTTP %d: %d attempts, want %d (err %v)", tc.status, s.count(), tc.attempts, err)
		}
		if tc.attempts == 3 && (len(slept) != 2 || slept[0] != 100*time.Millisecond || slept[1] != 200*time.Millisecond) {
			t.Errorf("HTTP %d: waits %v, want exponential backoff 100ms, 200ms", tc.status, slept)
		}
	}
}

func TestRetryThenSuccess(t *testing.T) {
	t.Parallel()
	s := &scripted{replies: []reply{
		{status: 429, body: `{"error":{"code":"rate_limited","message":"slow down"}}`, header: map[string]string{"Retry-After": "1"}},
		{status: 200, body: okRetrieve},
	}}
	c := newTestClient(t, s, Options{})
	var slept []time.Duration
	c.sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	r, err := c.Retrieve(context.Background(), testActor, RetrieveRequest{})
	if err != nil || len(r.Candidates) != 1 {
		t.Fatalf("r = %+v, err = %v", r, err)
	}
	if len(slept) != 1 || slept[0] != time.Second {
		t.Errorf("waits %v, want the 1 s of Retry-After", slept)
	}
}

func TestRetryAfterBeyondDeadlineGivesUpAtOnce(t *testing.T) {
	t.Parallel()
	s := &scripted{replies: []reply{{status: 429, body: `{"error":{"code":"rate_limited","message":"m"}}`,
		header: map[string]string{"Retry-After": "30"}}}}
	c := newTestClient(t, s, Options{})
	// The deadline lies well before the Retry-After and well after the 429 arrives, however
	// loaded the machine: a client that waited would reach it, one that gave up would not.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.Retrieve(ctx, testActor, RetrieveRequest{})
	var e *Error
	if !errors.As(err, &e) || e.Status != 429 || e.Class != ClassUnavailable {
		t.Fatalf("err = %v", err)
	}
	if s.count() != 1 {
		t.Errorf("%d attempts: a Retry-After past the deadline must not be waited for", s.count())
	}
	if ctx.Err() != nil {
		t.Errorf("the client waited until the deadline instead of giving up")
	}
}

func TestDeadlineAndTimeout(t *testing.T) {
	t.Parallel()
	s := &scripted{replies: []reply{{status: 200, body: okRetrieve, delay: 10 * time.Second}}}
	c := newTestClient(t, s, Options{Timeout: 5 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Retrieve(ctx, testActor, RetrieveRequest{})
	var e *Error
	if !errors.As(err, &e) || e.Class != ClassTimeout {
		t.Fatalf("context deadline: err = %v, want timeout", err)
	}
	// The client's own per-attempt timeout applies without a context deadline.
	c2 := newTestClient(t, s, Options{Timeout: 100 * time.Millisecond, MaxAttempts: 1})
	_, err = c2.Retrieve(context.Background(), testActor, RetrieveRequest{})
	if !errors.As(err, &e) || e.Class != ClassTimeout {
		t.Fatalf("client timeout: err = %v, want timeout", err)
	}
}

func TestConnectionRefusedIsUnavailable(t *testing.T) {
	t.Parallel()
	addr := testutil.ClosedAddr(t)
	c, err := New(Options{BaseURL: "http://" + addr, Token: testToken, Namespace: testNS, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Health(context.Background(), testActor)
	var e *Error
	if !errors.As(err, &e) || e.Class != ClassUnavailable || e.Status != 0 || !errors.Is(err, port.ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), addr) {
		t.Errorf("error names the address: %v", err)
	}
}

func TestCanceledCaller(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		calls.Add(1)
		<-r.Context().Done()
	})
	c := newTestClient(t, h, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err := c.Answer(ctx, testActor, AnswerRequest{})
	var e *Error
	if !errors.As(err, &e) || e.Class != ClassCanceled {
		t.Fatalf("err = %v", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"": 0, "3": 3 * time.Second, " 2 ": 2 * time.Second, "-1": 0, "soon": 0,
		now.Add(4 * time.Second).Format(http.TimeFormat): 4 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):      0,
	}
	for in, want := range cases {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestNewRefusesIncompleteOptions(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{
		{BaseURL: "ftp://x", Token: "t", Namespace: testNS},
		{BaseURL: "http://127.0.0.1:1", Namespace: testNS},
		{BaseURL: "http://127.0.0.1:1", Token: "t"},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		} else if strings.Contains(err.Error(), "t\"") {
			t.Errorf("error quotes the token: %v", err)
		}
	}
}

// TestRetriesEndedByTheDeadlineKeepRAGcoresAnswer: RAGcore answers 503, then hangs on the retry
// until the caller's deadline. The rule of call: the last HTTP answer (503, unavailable) wins
// over the deadline that cut the retry, so the class does not depend on when the deadline falls.
func TestRetriesEndedByTheDeadlineKeepRAGcoresAnswer(t *testing.T) {
	t.Parallel()
	s := &scripted{replies: []reply{
		{status: 503, body: `{"error":{"code":"unavailable","message":"m"}}`},
		{status: 200, body: okRetrieve, delay: 10 * time.Second},
	}}
	c := newTestClient(t, s, Options{Timeout: 5 * time.Second})
	c.sleep = func(context.Context, time.Duration) error { return nil } // retry at once
	// The deadline must fall after the first answer, also on a loaded machine: 2 s.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := c.Retrieve(ctx, testActor, RetrieveRequest{})
	var e *Error
	if !errors.As(err, &e) || e.Class != ClassUnavailable || e.Status != 503 {
		t.Fatalf("err = %v, want unavailable (HTTP 503)", err)
	}
	if !errors.Is(err, port.ErrUnavailable) {
		t.Errorf("503 until the deadline must be port.ErrUnavailable: %v", err)
	}
	if s.count() != 2 {
		t.Errorf("%d attempts, want 2", s.count())
	}
	// The same when the retry's answer starts and its body stalls until the deadline.
	var n atomic.Int32
	stall := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if n.Add(1) == 1 {
			w.WriteHeader(503)
			w.Write([]byte(`{"error":{"code":"unavailable","message":"m"}}`))
			return
		}
		w.WriteHeader(200)
		w.Write([]byte(okRetrieve[:20]))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	c = newTestClient(t, stall, Options{Timeout: 5 * time.Second})
	c.sleep = func(context.Context, time.Duration) error { return nil }
	ctx3, cancel3 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel3()
	_, err = c.Retrieve(ctx3, testActor, RetrieveRequest{})
	if !errors.As(err, &e) || e.Class != ClassUnavailable || e.Status != 503 || n.Load() != 2 {
		t.Fatalf("503 then a stalled body: err = %v after %d attempts, want unavailable (HTTP 503)", err, n.Load())
	}
	// With no HTTP answer at all, the deadline is the outcome.
	h := &scripted{replies: []reply{{status: 200, body: okRetrieve, delay: 10 * time.Second}}}
	c = newTestClient(t, h, Options{Timeout: 5 * time.Second})
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	_, err = c.Retrieve(ctx2, testActor, RetrieveRequest{})
	if !errors.As(err, &e) || e.Class != ClassTimeout || errors.Is(err, port.ErrUnavailable) {
		t.Fatalf("hang: err = %v, want timeout that is not ErrUnavailable", err)
	}
}

// TestUnavailableMeansUnreachable: port.ErrUnavailable is RAGcore that cannot be reached at
// all (refused, unresolvable, 503 to the end); a request it failed (500, 429, 4xx, a timeout) is not.
func TestUnavailableMeansUnreachable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		want   bool
	}{{503, true}, {500, false}, {502, false}, {429, false}, {400, false}, {401, false}} {
		s := &scripted{replies: []reply{{status: tc.status, body: `{"error":{"code":"x","message":"y"}}`}}}
		c := newTestClient(t, s, Options{MaxAttempts: 1})
		_, err := c.Retrieve(context.Background(), testActor, RetrieveRequest{})
		if err == nil || errors.Is(err, port.ErrUnavailable) != tc.want {
			t.Errorf("HTTP %d: errors.Is(ErrUnavailable) = %v, want %v (%v)", tc.status, !tc.want, tc.want, err)
		}
	}
	// Name resolution failure, without a real lookup: the dialer reports what a resolver would.
	dnsFail := &http.Client{Timeout: time.Second, Transport: &http.Transport{
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "ragcore.internal", IsNotFound: true}}
		}}}
	c, err := New(Options{BaseURL: "http://ragcore.internal", Token: testToken, Namespace: testNS, HTTPClient: dnsFail})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Retrieve(context.Background(), testActor, RetrieveRequest{})
	var e *Error
	if !errors.As(err, &e) || e.Class != ClassUnavailable || !errors.Is(err, port.ErrUnavailable) {
		t.Fatalf("DNS failure: err = %v, want unavailable and ErrUnavailable", err)
	}
	if strings.Contains(err.Error(), "ragcore.internal") {
		t.Errorf("error names the host: %v", err)
	}
}
