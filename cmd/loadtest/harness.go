package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/ragcorefake"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/app"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/tracelog"
)

// Options bound one run of the harness.
type Options struct {
	// Setups to run, in order: "memory", "dynamodb", "ragcore".
	Setups []string
	// Clients is the number of concurrent clients.
	Clients int
	// Phase is the length of one phase; Requests bounds the lookups sent in one phase.
	Phase    time.Duration
	Requests int
	// Total bounds the whole run, start-ups included: phases that would start later are skipped.
	Total time.Duration
	// ReadBack is how many traces of a phase are read back through GET /invocations.
	ReadBack int
	// RAGcoreTimeout, BreakerFailures and BreakerCooldown configure the service in the ragcore
	// setup (0 failures: the service's default).
	RAGcoreTimeout  time.Duration
	BreakerFailures int
	BreakerCooldown time.Duration
	// Logs receives the service's logs and metrics (io.Discard when nil).
	Logs io.Writer
}

// Result is what one phase measured.
type Result struct {
	Setup, Phase string
	Skipped      bool
	Requests     int
	Elapsed      time.Duration
	P50, P99     time.Duration
	Max          time.Duration
	// Codes counts HTTP statuses; 0 is a request that got no response.
	Codes map[int]int
	// L1 counts the l1.status of the lookups answered 200.
	L1 map[string]int
	// TracesWritten are the answered lookups whose trace reached the store, TracesToLog those
	// written to the log instead (the store failed), TracesRead those of ReadChecked sampled
	// that GET /invocations returned.
	TracesWritten, TracesToLog int
	TracesRead, ReadChecked    int
	// RAGcoreRequests is what the fake RAGcore received during the phase (ragcore setup only).
	RAGcoreRequests int
	// BreakerOpen is the breaker's state at the end of the phase (ragcore setup only).
	BreakerOpen bool
	// The "replayed" step of the dynamodb setup: the traces logged while the table was down
	// put back with the replay of cmd/trace-replay (ReplayStored new, ReplayPresent there
	// already), then every lookup answered while it was down looked up in the table:
	// ReplayChecked of them, ReplayMissing not found.
	Replay                       bool
	ReplayStored, ReplayPresent  int
	ReplayChecked, ReplayMissing int
}

// Throughput is the phase's answered requests per second.
func (r Result) Throughput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// phase is one step of a setup: fault runs before the load starts.
type phase struct {
	name  string
	fault func(ctx context.Context) error
}

// target is one setup's service under load.
type target struct {
	base    string      // http://127.0.0.1:port/api/v1/knowledge
	logs    *traceLines // the service's log lines that carry a trace (dynamodb setup)
	down    []string    // invocation ids answered while the table was down
	app     *app.App
	fake    *ragcorefake.Server
	breaker port.BreakerReporter
	phases  []phase
	close   func()
}

var questions = []struct{ lang, text string }{
	{"en", "The windscreen has a crack after a stone hit it, how do I report the damage?"},
	{"de", "Die Windschutzscheibe hat einen Riss, wie melde ich den Schaden?"},
	{"en", "The battery is at 8 percent and the customer is stuck at a charging station"},
	{"en", "flat tyre on the motorway, what now?"},
	{"de", "Kunde meldet Kratzer und eine Delle an der Fahrertür nach dem Parken"},
	{"en", "customer left a phone in the car, where do lost items go?"},
}

// Run runs every setup's phases and returns one Result per phase.
func Run(ctx context.Context, o Options) ([]Result, error) {
	if o.Logs == nil {
		o.Logs = io.Discard
	}
	ctx, cancel := context.WithTimeout(ctx, o.Total)
	defer cancel()
	var out []Result
	for _, name := range o.Setups {
		t, err := newTarget(ctx, name, o)
		if err != nil {
			return out, fmt.Errorf("setup %s: %w", name, err)
		}
		for _, ph := range t.phases {
			r := Result{Setup: name, Phase: ph.name}
			if ctx.Err() != nil {
				r.Skipped = true
				out = append(out, r)
				continue
			}
			if ph.fault != nil {
				if err := ph.fault(ctx); err != nil {
					t.close()
					return out, fmt.Errorf("%s/%s: %w", name, ph.name, err)
				}
			}
			out = append(out, t.run(ctx, r, o))
		}
		if t.logs != nil {
			out = append(out, t.replay(ctx, name))
		}
		t.close()
	}
	return out, nil
}

// newTarget builds the service of a setup with the local API's building blocks (config.FromEnv,
// app.New, App.Server) and serves it on a loopback port.
func newTarget(ctx context.Context, setup string, o Options) (*target, error) {
	env := map[string]string{"AUTH_MODE": "local-headers", "LOG_LEVEL": "warn"}
	t := &target{}
	var cleanups []func()
	t.close = func() {
		for _, c := range slices.Backward(cleanups) {
			c()
		}
	}
	steady := phase{name: "steady"}
	switch setup {
	case "memory":
		t.phases = []phase{steady}
	case "dynamodb":
		root, err := ddblocal.RepoRoot()
		if err != nil {
			return nil, err
		}
		dir, err := ddblocal.JarDir(root)
		if err != nil {
			return nil, err
		}
		local, err := startDynamo(ctx, dir, root, 0)
		if err != nil {
			return nil, err
		}
		port, _ := strconv.Atoi(local.Endpoint[strings.LastIndex(local.Endpoint, ":")+1:])
		cleanups = append(cleanups, func() { local.Kill() })
		// A killed DynamoDB Local refuses connections at once, so the deadline does not set the
		// outage's pace; it only has to hold a write the table accepts on a busy machine (a
		// Java process and the race detector on two cores took 530 ms at the 99th percentile).
		env["DYNAMODB_ENDPOINT"], env["TABLE_NAME"], env["DYNAMODB_TIMEOUT_MS"] = local.Endpoint, loadTable, "1500"
		t.phases = []phase{steady,
			{name: "ddb killed", fault: func(context.Context) error { local.Kill(); return nil }},
			{name: "ddb restarted", fault: func(ctx context.Context) error {
				l, err := startDynamo(ctx, dir, root, port)
				if err != nil {
					return err
				}
				local = l
				return nil
			}},
		}
	case "ragcore":
		corpus, err := knowledge.Embedded()
		if err != nil {
			return nil, err
		}
		const token = "loadtest-token"
		t.fake = ragcorefake.New(ragcorefake.Options{Token: token, Seed: 1})
		t.fake.LoadCorpus(corpus, "mobilityops-procedures")
		rc, err := serveFake(t.fake, "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		cleanups = append(cleanups, func() { rc.stop() })
		env["KNOWLEDGE_PROVIDER"], env["RAGCORE_BASE_URL"], env["RAGCORE_TOKEN"] = "ragcore", "http://"+rc.addr, token
		env["RAGCORE_TIMEOUT_MS"] = strconv.Itoa(int(o.RAGcoreTimeout.Milliseconds()))
		env["RAGCORE_BREAKER_COOLDOWN_MS"] = strconv.Itoa(int(o.BreakerCooldown.Milliseconds()))
		if o.BreakerFailures > 0 {
			env["RAGCORE_BREAKER_FAILURES"] = strconv.Itoa(o.BreakerFailures)
		}
		t.phases = []phase{steady,
			{name: "ragcore slow", fault: func(context.Context) error {
				// Hanging far past the timeout: only the timeout (or the breaker) ends a call.
				t.fake.SetFaults(ragcorefake.Faults{Latency: time.Minute})
				return nil
			}},
			{name: "ragcore 500s", fault: func(context.Context) error {
				t.fake.SetFaults(ragcorefake.Faults{ErrorRate: 1, ErrorStatus: http.StatusInternalServerError})
				return nil
			}},
			{name: "ragcore stopped", fault: func(context.Context) error { rc.stop(); return nil }},
			{name: "ragcore recovered", fault: func(context.Context) error {
				t.fake.SetFaults(ragcorefake.Faults{})
				return rc.start()
			}},
		}
	default:
		return nil, fmt.Errorf("unknown setup %q (memory, dynamodb, ragcore)", setup)
	}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.close()
		return nil, err
	}
	logs := o.Logs
	if setup == "dynamodb" {
		t.logs = &traceLines{}
		logs = io.MultiWriter(o.Logs, t.logs)
	}
	a, err := app.New(ctx, cfg, logs)
	if err != nil {
		t.close()
		return nil, err
	}
	t.app = a
	t.breaker, _ = a.Provider.(port.BreakerReporter)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.close()
		return nil, err
	}
	srv := a.Server(ln.Addr().String())
	go func() { _ = srv.Serve(ln) }()
	cleanups = append(cleanups, func() { _ = srv.Close() })
	t.base = "http://" + ln.Addr().String() + "/api/v1/knowledge"
	return t, nil
}

// loadTable is the table name in the dynamodb setup.
const loadTable = "loadtest-traces"

func startDynamo(ctx context.Context, dir, root string, port int) (*ddblocal.Local, error) {
	l, err := ddblocal.Start(ctx, dir, port)
	if err != nil {
		return nil, err
	}
	if err := l.CreateTemplateTable(ctx, root, loadTable); err != nil {
		l.Kill()
		return nil, err
	}
	// A phase with the table up starts once the table answers like a warm one, well inside
	// the store's 500 ms deadline: the phase measures the service, not the emulator's JVM warming.
	if err := l.Warm(ctx, loadTable, 100*time.Millisecond); err != nil {
		l.Kill()
		return nil, err
	}
	return l, nil
}

// fakeServer serves the fake RAGcore on a fixed loopback address that can be stopped and
// started again, as a RAGcore that goes away and comes back.
type fakeServer struct {
	fake *ragcorefake.Server
	addr string
	mu   sync.Mutex
	srv  *http.Server
}

func serveFake(f *ragcorefake.Server, addr string) (*fakeServer, error) {
	s := &fakeServer{fake: f, addr: addr}
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *fakeServer) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return nil
	}
	var ln net.Listener
	var err error
	for range 50 { // the port may linger for a moment after a stop
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	s.addr = ln.Addr().String()
	s.srv = &http.Server{Handler: s.fake, ReadHeaderTimeout: 5 * time.Second}
	go func(srv *http.Server) { _ = srv.Serve(ln) }(s.srv)
	return nil
}

func (s *fakeServer) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		_ = s.srv.Close()
		s.srv = nil
	}
}

// client is the harness's HTTP client: every request has a deadline.
var client = &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64, Proxy: nil}}

type sample struct {
	latency      time.Duration
	code         int
	l1           string
	invocationID string
}

// run sends lookups from o.Clients clients until the phase's time or request budget is spent,
// then reads a sample of the traces back, spread evenly over the phase (the in-memory store
// keeps only its newest 10,000 traces, so a long phase there reads back fewer).
func (t *target) run(ctx context.Context, r Result, o Options) Result {
	pctx, cancel := context.WithTimeout(ctx, o.Phase)
	defer cancel()
	failuresBefore := t.app.Service.TraceFailures()
	fakeBefore := 0
	if t.fake != nil {
		fakeBefore = len(t.fake.Requests())
	}
	var issued atomic.Int64
	samples := make([][]sample, o.Clients)
	start := time.Now()
	var wg sync.WaitGroup
	for c := range o.Clients {
		wg.Go(func() {
			for pctx.Err() == nil {
				n := issued.Add(1)
				if n > int64(o.Requests) {
					return
				}
				// The phase's end stops new lookups; one in flight finishes (bounded by the
				// client's timeout), so that every trace it wrote is counted.
				samples[c] = append(samples[c], t.lookup(ctx, int(n)))
			}
		})
	}
	wg.Wait()
	r.Elapsed = time.Since(start)
	all := slices.Concat(samples...)
	r.Codes, r.L1 = map[int]int{}, map[string]int{}
	var lat []time.Duration
	var ids []string
	for _, s := range all {
		if s.code == -1 {
			continue // cut off by the end of the phase: not a result of the service
		}
		r.Requests++
		r.Codes[s.code]++
		lat = append(lat, s.latency)
		if s.code == http.StatusOK {
			r.L1[s.l1]++
			ids = append(ids, s.invocationID)
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	r.P50, r.P99 = percentile(lat, 50), percentile(lat, 99)
	if len(lat) > 0 {
		r.Max = lat[len(lat)-1]
	}
	r.TracesToLog = int(t.app.Service.TraceFailures() - failuresBefore)
	if r.Phase == "ddb killed" {
		t.down = append(t.down, ids...)
	}
	r.TracesWritten = len(ids) - r.TracesToLog
	for _, id := range spread(ids, o.ReadBack) {
		r.ReadChecked++
		if t.readTrace(ctx, id) {
			r.TracesRead++
		}
	}
	if t.fake != nil {
		r.RAGcoreRequests = len(t.fake.Requests()) - fakeBefore
	}
	if t.breaker != nil {
		r.BreakerOpen = t.breaker.BreakerOpen()
	}
	return r
}

func (t *target) lookup(ctx context.Context, n int) sample {
	q := questions[n%len(questions)]
	body, _ := json.Marshal(map[string]any{"question": q.text, "language": q.lang})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, t.base+"/lookup", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Actor-Id", "load-"+strconv.Itoa(n%16))
	req.Header.Set("X-Actor-Scope", "knowledge:read")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return sample{code: -1}
		}
		return sample{latency: time.Since(start), code: 0}
	}
	defer resp.Body.Close()
	var res struct {
		InvocationID string `json:"invocation_id"`
		Retrieval    struct {
			L1 struct {
				Status string `json:"status"`
			} `json:"l1"`
		} `json:"retrieval"`
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil && ctx.Err() != nil {
		return sample{code: -1}
	}
	s := sample{latency: time.Since(start), code: resp.StatusCode}
	if json.Unmarshal(raw, &res) == nil {
		s.l1, s.invocationID = res.Retrieval.L1.Status, res.InvocationID
	}
	return s
}

// traceLines keeps the log lines that carry a whole trace (a write that failed), as the
// function's log would hold them.
type traceLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *traceLines) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(`"trace":{`)) {
		l.mu.Lock()
		l.buf.Write(p)
		l.mu.Unlock()
	}
	return len(p), nil
}

func (l *traceLines) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.buf.Bytes())
}

// replay puts the logged traces back into the restarted table, as an operator would with
// cmd/trace-replay, and checks that every lookup answered while the table was down has its trace
// there now.
func (t *target) replay(ctx context.Context, setup string) Result {
	r := Result{Setup: setup, Phase: "replayed", Replay: true}
	start := time.Now()
	putter, ok := t.app.Records.(tracelog.Putter)
	if !ok { // only the DynamoDB store puts conditionally; the setup uses it
		r.ReplayMissing = len(t.down)
		return r
	}
	rp := tracelog.Replayer{Store: putter, Rate: 5000, Workers: 8, Log: slog.New(slog.DiscardHandler)}
	c, err := rp.Replay(ctx, bytes.NewReader(t.logs.bytes()), "lines")
	r.Elapsed = time.Since(start)
	r.ReplayStored, r.ReplayPresent = c.Stored, c.AlreadyPresent
	if err != nil {
		r.ReplayMissing = len(t.down) // unknown: counted missing
		return r
	}
	for _, id := range t.down {
		r.ReplayChecked++
		gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if _, err := t.app.Records.GetTrace(gctx, id); err != nil {
			r.ReplayMissing++
		}
		cancel()
	}
	return r
}

// readTrace reads one trace back through the API, as its actor.
func (t *target) readTrace(ctx context.Context, id string) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, t.base+"/invocations/"+id, nil)
	req.Header.Set("X-Actor-Id", "load-reader")
	req.Header.Set("X-Actor-Scope", "knowledge:read knowledge:admin")
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusOK
}

// spread picks at most n ids evenly over the phase.
func spread(ids []string, n int) []string {
	if len(ids) <= n {
		return ids
	}
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, ids[i*len(ids)/n])
	}
	return out
}

func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[max(min(i, len(sorted))-1, 0)]
}

// Table prints the results compactly, one line per phase.
func Table(w io.Writer, rs []Result) {
	fmt.Fprintf(w, "%-9s %-17s %6s %7s %7s %7s %7s  %-12s %-27s %-20s %s\n",
		"setup", "phase", "reqs", "req/s", "p50 ms", "p99 ms", "max ms", "codes", "l1 status", "traces store/log/rd", "ragcore")
	for _, r := range rs {
		if r.Skipped {
			fmt.Fprintf(w, "%-9s %-17s skipped (the run's time was up)\n", r.Setup, r.Phase)
			continue
		}
		if r.Replay {
			fmt.Fprintf(w, "%-9s %-17s logged traces put back: %d stored, %d already there; answered while down: %d, missing from the table now: %d (%.1f s)\n",
				r.Setup, r.Phase, r.ReplayStored, r.ReplayPresent, r.ReplayChecked, r.ReplayMissing, r.Elapsed.Seconds())
			continue
		}
		rc := "-"
		if r.Setup == "ragcore" {
			rc = fmt.Sprintf("%d req, breaker %s", r.RAGcoreRequests, map[bool]string{true: "open", false: "closed"}[r.BreakerOpen])
		}
		fmt.Fprintf(w, "%-9s %-17s %6d %7.1f %7.1f %7.1f %7.1f  %-12s %-27s %-20s %s\n", r.Setup, r.Phase, r.Requests,
			r.Throughput(), ms(r.P50), ms(r.P99), ms(r.Max), counts(r.Codes), counts(r.L1),
			fmt.Sprintf("%d/%d/%d of %d", r.TracesWritten, r.TracesToLog, r.TracesRead, r.ReadChecked), rc)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func counts[K int | string](m map[K]int) string {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		name := fmt.Sprint(k)
		if name == "0" {
			name = "none"
		}
		parts = append(parts, name+":"+strconv.Itoa(m[k]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}
