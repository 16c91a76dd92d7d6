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
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
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
	// BreakerCooldown is the cool-down of both breakers: RAGcore's (ragcore setup) and the trace
	// store's (dynamodb setup; 0: the service's default).
	BreakerCooldown time.Duration
	// TraceWait is DYNAMODB_TRACE_WAIT_MS of the dynamodb setup (0: the service's default). Like
	// its DYNAMODB_TIMEOUT_MS, it must hold a write DynamoDB Local accepts on a busy machine (a
	// freshly restarted one took 320 ms at the 99th percentile beside other work on two cores),
	// or traces of a table that answers go to the log.
	TraceWait time.Duration
	// FloodCalls is the number of lookup_knowledge calls in one batch of the batch flood.
	FloodCalls int
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
	// P50Early is the median latency of the phase's lookups 11 to 30 in the order they were
	// sent: the first ones after its fault, once the first few have met it.
	P50Early time.Duration
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
	// BreakerOpen is the breaker's state at the end of the phase: RAGcore's (ragcore setup) or
	// the trace store's (dynamodb setup).
	BreakerOpen bool
	// Flood marks the batch flood: Requests are POST /mcp, each a JSON-RPC batch of FloodCalls
	// lookup_knowledge calls; FloodLookups is the lookups they ran (the traces they left).
	Flood        bool
	FloodCalls   int
	FloodLookups int
	// The "replayed" step of the dynamodb setup: the traces logged in every phase put back with
	// the replay of cmd/trace-replay, with its settings (ReplayStored new, ReplayPresent there
	// already; ReplayOther unreadable, conflicting or failed), then every logged trace looked up
	// in the table by its invocation id: ReplayChecked of them, ReplayMissing not found.
	Replay                       bool
	ReplayStored, ReplayPresent  int
	ReplayOther                  int
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
	// flood: the clients send batches to POST /mcp instead of lookups.
	flood bool
}

// target is one setup's service under load.
type target struct {
	base     string      // http://127.0.0.1:port/api/v1/knowledge
	endpoint string      // DynamoDB Local's (dynamodb setup)
	logs     *traceLines // the service's log lines that carry a trace (dynamodb setup)
	app      *app.App
	fake     *ragcorefake.Server
	breaker  port.BreakerReporter
	// storeBreaker is the trace store's breaker (dynamodb setup).
	storeBreaker port.BreakerReporter
	phases       []phase
	// close runs cleanups (what the setup started) in reverse order.
	close    func()
	cleanups []func()
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
			out = append(out, t.run(ctx, r, ph, o))
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
	t.close = func() {
		for _, c := range slices.Backward(t.cleanups) {
			c()
		}
	}
	var err error
	switch setup {
	case "memory":
		t.phases = []phase{{name: "steady"}, {name: "batch flood", flood: true}}
	case "dynamodb":
		err = t.dynamodb(ctx, o, env)
	case "ragcore":
		err = t.ragcore(o, env)
	default:
		return nil, fmt.Errorf("unknown setup %q (memory, dynamodb, ragcore)", setup)
	}
	if err != nil {
		return nil, err
	}
	if err := t.serve(ctx, setup, o, env); err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// dynamodb starts DynamoDB Local with the table for the dynamodb setup, points env at it and
// sets the phases that freeze, thaw, kill and restart it.
func (t *target) dynamodb(ctx context.Context, o Options, env map[string]string) error {
	root, dir, err := ddblocal.Installed()
	if err != nil {
		return err
	}
	local, err := startDynamo(ctx, dir, root, 0)
	if err != nil {
		return err
	}
	port, _ := strconv.Atoi(local.Endpoint[strings.LastIndex(local.Endpoint, ":")+1:])
	t.endpoint = local.Endpoint
	t.cleanups = append(t.cleanups, func() { local.Kill() }) // the one running at the end
	// A killed DynamoDB Local refuses connections at once, so the deadline does not set the
	// outage's pace; it only has to hold a write the table accepts on a busy machine (a
	// Java process and the race detector on two cores took 530 ms at the 99th percentile).
	env["DYNAMODB_ENDPOINT"], env["TABLE_NAME"], env["DYNAMODB_TIMEOUT_MS"] = local.Endpoint, loadTable, "1500"
	if o.TraceWait > 0 {
		env["DYNAMODB_TRACE_WAIT_MS"] = strconv.Itoa(int(o.TraceWait.Milliseconds()))
	}
	if o.BreakerCooldown > 0 {
		env["DYNAMODB_BREAKER_COOLDOWN_MS"] = strconv.Itoa(int(max(o.BreakerCooldown, 100*time.Millisecond).Milliseconds()))
	}
	t.phases = []phase{{name: "steady"},
		// SIGSTOP: DynamoDB Local accepts connections and answers nothing, a table that hangs.
		{name: "ddb frozen", fault: func(context.Context) error { return local.Freeze() }},
		{name: "ddb thawed", fault: func(ctx context.Context) error {
			if err := local.Thaw(); err != nil {
				return err
			}
			return t.storeAnswers(ctx)
		}},
		{name: "ddb killed", fault: func(context.Context) error { local.Kill(); return nil }},
		{name: "ddb restarted", fault: func(ctx context.Context) error {
			l, err := startDynamo(ctx, dir, root, port)
			if err != nil {
				return err
			}
			local = l
			return t.storeAnswers(ctx)
		}},
	}
	return nil
}

// ragcore serves the fake RAGcore with the embedded corpus for the ragcore setup, points env at
// it and sets the phases that slow it, fail it, stop it and let it recover.
func (t *target) ragcore(o Options, env map[string]string) error {
	corpus, err := knowledge.Embedded()
	if err != nil {
		return err
	}
	const token = "loadtest-token"
	t.fake = ragcorefake.New(ragcorefake.Options{Token: token, Seed: 1})
	t.fake.LoadCorpus(corpus, config.DefaultRAGcoreSourcePrefix)
	rc, err := serveFake(t.fake, "127.0.0.1:0")
	if err != nil {
		return err
	}
	t.cleanups = append(t.cleanups, func() { rc.stop() })
	env["KNOWLEDGE_PROVIDER"], env["RAGCORE_BASE_URL"], env["RAGCORE_TOKEN"] = "ragcore", "http://"+rc.addr, token
	env["RAGCORE_TIMEOUT_MS"] = strconv.Itoa(int(o.RAGcoreTimeout.Milliseconds()))
	env["RAGCORE_BREAKER_COOLDOWN_MS"] = strconv.Itoa(int(o.BreakerCooldown.Milliseconds()))
	if o.BreakerFailures > 0 {
		env["RAGCORE_BREAKER_FAILURES"] = strconv.Itoa(o.BreakerFailures)
	}
	t.phases = []phase{{name: "steady"},
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
	return nil
}

// serve builds the service from env as the local API does and serves it on a loopback port.
func (t *target) serve(ctx context.Context, setup string, o Options, env map[string]string) error {
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		return err
	}
	logs := o.Logs
	if setup == "dynamodb" {
		t.logs = &traceLines{}
		logs = io.MultiWriter(o.Logs, t.logs)
	}
	a, err := app.New(ctx, cfg, logs)
	if err != nil {
		return err
	}
	t.app = a
	t.breaker, _ = a.Provider.(port.BreakerReporter)
	t.storeBreaker, _ = a.Records.(port.BreakerReporter)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := a.Server(ln.Addr().String())
	go func() { _ = srv.Serve(ln) }()
	t.cleanups = append(t.cleanups, func() { _ = srv.Close() })
	t.base = "http://" + ln.Addr().String() + "/api/v1/knowledge"
	return nil
}

// loadTable is the table name in the dynamodb setup.
const loadTable = "loadtest-traces"

// storeAnswers waits, once the table is back, until the trace store's breaker has closed: after
// its cool-down one read through the store is its probe. A phase after an outage then measures
// the table, not the rest of the cool-down.
func (t *target) storeAnswers(ctx context.Context) error {
	for t.storeBreaker != nil && t.storeBreaker.BreakerOpen() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, _ = t.app.Records.GetTrace(rctx, "LOADTEST-PROBE")
		cancel()
	}
	return nil
}

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
	n            int // the order it was sent in, from 1
	latency      time.Duration
	code         int
	l1           string
	invocationID string
}

// run sends lookups (or, in the batch flood, batches of them to POST /mcp) from o.Clients
// clients until the phase's time or request budget is spent, then reads a sample of the traces
// back, spread evenly over the phase (the in-memory store keeps only its newest 10,000 traces,
// so a long phase there reads back fewer).
func (t *target) run(ctx context.Context, r Result, ph phase, o Options) Result {
	pctx, cancel := context.WithTimeout(ctx, o.Phase)
	defer cancel()
	failuresBefore := t.app.Service.TraceFailures()
	keptBefore := t.kept()
	fakeBefore := 0
	if t.fake != nil {
		fakeBefore = len(t.fake.Requests())
	}
	send := t.lookup
	if ph.flood {
		r.Flood, r.FloodCalls = true, o.FloodCalls
		send = func(ctx context.Context, n int) sample { return t.flood(ctx, n, o.FloodCalls) }
	}
	start := time.Now()
	all := drive(ctx, pctx, send, o)
	r.Elapsed = time.Since(start)
	ids := tally(&r, all, ph.flood)
	r.TracesToLog = int(t.app.Service.TraceFailures() - failuresBefore)
	if ph.flood {
		r.FloodLookups = t.kept() - keptBefore + r.TracesToLog
		r.TracesWritten = t.kept() - keptBefore
	} else {
		r.TracesWritten = len(ids) - r.TracesToLog
	}
	for _, id := range spread(ids, o.ReadBack) {
		r.ReadChecked++
		if t.readTrace(ctx, id) {
			r.TracesRead++
		}
	}
	if t.fake != nil {
		r.RAGcoreRequests = len(t.fake.Requests()) - fakeBefore
	}
	switch {
	case t.breaker != nil:
		r.BreakerOpen = t.breaker.BreakerOpen()
	case t.storeBreaker != nil:
		r.BreakerOpen = t.storeBreaker.BreakerOpen()
	}
	return r
}

// drive sends requests from o.Clients clients until pctx ends or o.Requests are issued, and
// returns every request's sample.
func drive(ctx, pctx context.Context, send func(context.Context, int) sample, o Options) []sample {
	var issued atomic.Int64
	samples := make([][]sample, o.Clients)
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
				s := send(ctx, int(n))
				s.n = int(n)
				samples[c] = append(samples[c], s)
			}
		})
	}
	wg.Wait()
	return slices.Concat(samples...)
}

// tally counts the samples into r: requests, statuses, l1 statuses and latencies; it returns the
// invocation ids of the lookups answered (none in a flood).
func tally(r *Result, all []sample, flood bool) []string {
	r.Codes, r.L1 = map[int]int{}, map[string]int{}
	var lat, early []time.Duration
	var ids []string
	for _, s := range all {
		if s.code == -1 {
			continue // cut off by the end of the phase: not a result of the service
		}
		r.Requests++
		r.Codes[s.code]++
		lat = append(lat, s.latency)
		if s.n >= 11 && s.n <= 30 {
			early = append(early, s.latency)
		}
		if s.code == http.StatusOK && !flood {
			r.L1[s.l1]++
			ids = append(ids, s.invocationID)
		}
	}
	slices.Sort(lat)
	slices.Sort(early)
	r.P50, r.P99, r.P50Early = percentile(lat, 50), percentile(lat, 99), percentile(early, 50)
	if len(lat) > 0 {
		r.Max = lat[len(lat)-1]
	}
	return ids
}

// kept is the number of traces the in-memory store took since it was made (those it holds and
// those it dropped to stay bounded); 0 for another store.
func (t *target) kept() int {
	m, ok := t.app.Records.(interface {
		Len() int
		Evicted() int64
	})
	if !ok {
		return 0
	}
	return m.Len() + int(m.Evicted())
}

// flood sends one JSON-RPC batch of calls lookup_knowledge calls to POST /mcp, as one request.
func (t *target) flood(ctx context.Context, n, calls int) sample {
	batch := make([]map[string]any, calls)
	for i := range batch {
		q := questions[(n+i)%len(questions)]
		batch[i] = map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
			"params": map[string]any{"name": lookup.ToolLookup, "arguments": map[string]any{"question": q.text, "language": q.lang}}}
	}
	body, _ := json.Marshal(batch)
	_, s := t.post(ctx, "/mcp", "load-flood", body, "application/json, text/event-stream")
	return s
}

// post sends body to the API's path as actor and reads the whole answer: the sample (code -1
// when the run ended first, 0 when no response came) and the body read.
func (t *target) post(ctx context.Context, path, actor string, body []byte, accept string) ([]byte, sample) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, t.base+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	req.Header.Set("X-Actor-Id", actor)
	req.Header.Set("X-Actor-Scope", "knowledge:read")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, sample{code: -1}
		}
		return nil, sample{latency: time.Since(start), code: 0}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil && ctx.Err() != nil {
		return nil, sample{code: -1}
	}
	return raw, sample{latency: time.Since(start), code: resp.StatusCode}
}

func (t *target) lookup(ctx context.Context, n int) sample {
	q := questions[n%len(questions)]
	body, _ := json.Marshal(map[string]any{"question": q.text, "language": q.lang})
	raw, s := t.post(ctx, "/lookup", "load-"+strconv.Itoa(n%16), body, "")
	var res struct {
		InvocationID string `json:"invocation_id"`
		Retrieval    struct {
			L1 struct {
				Status string `json:"status"`
			} `json:"l1"`
		} `json:"retrieval"`
	}
	if s.code > 0 && json.Unmarshal(raw, &res) == nil {
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

// replay puts the logged traces back into the restarted table as an operator would with
// cmd/trace-replay (its DynamoDB client and deadlines, a higher rate), and checks that every
// logged trace is there now. (The traces stored before DynamoDB Local was killed are gone with
// it: it keeps its tables in memory.)
func (t *target) replay(ctx context.Context, setup string) Result {
	r := Result{Setup: setup, Phase: "replayed", Replay: true}
	start := time.Now()
	logged := t.logs.bytes()
	var ids []string
	for _, line := range bytes.Split(logged, []byte("\n")) {
		var rec struct {
			ID string `json:"invocation_id"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.ID != "" {
			ids = append(ids, rec.ID)
		}
	}
	client, err := store.NewDynamoClient(ctx, store.ClientOptions{Endpoint: t.endpoint, MaxAttempts: 5, HTTPTimeout: 5 * time.Second})
	if err != nil {
		r.ReplayMissing = len(ids)
		return r
	}
	table := store.NewDynamo(client, loadTable, 5*time.Second, nil)
	rp := tracelog.Replayer{Store: table, Rate: 5000, Workers: 8, Log: slog.New(slog.DiscardHandler)}
	c, err := rp.Replay(ctx, bytes.NewReader(logged))
	r.Elapsed = time.Since(start)
	r.ReplayStored, r.ReplayPresent, r.ReplayOther = c.Stored, c.AlreadyPresent, c.Unreadable+c.Conflicting+c.Failed
	if err != nil {
		r.ReplayMissing = len(ids) // unknown: counted missing
		return r
	}
	for _, id := range ids {
		r.ReplayChecked++
		gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if _, err := table.GetTrace(gctx, id); err != nil {
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

// Table prints the results, one line per phase, under a header that names every column, and a
// legend that says what each figure is.
func Table(w io.Writer, rs []Result) {
	const row = "%-9s %-14s %8s %7s %7s %7s %7s %9s  %-16s %-28s %7s %7s %9s  %s\n"
	fmt.Fprintf(w, row, "setup", "phase", "requests", "req/s", "p50 ms", "p99 ms", "max ms", "p50 11-30",
		"HTTP status", "l1 status", "stored", "logged", "read back", "notes")
	for _, r := range rs {
		if r.Skipped {
			fmt.Fprintf(w, "%-9s %-14s skipped (the run's time was up)\n", r.Setup, r.Phase)
			continue
		}
		if r.Replay {
			fmt.Fprintf(w, "%-9s %-14s the logged traces put back: %d stored, %d already there, %d unreadable, conflicting or failed; of the %d traces logged, %d missing from the table now (%.1f s)\n",
				r.Setup, r.Phase, r.ReplayStored, r.ReplayPresent, r.ReplayOther, r.ReplayChecked, r.ReplayMissing, r.Elapsed.Seconds())
			continue
		}
		notes := "-"
		switch {
		case r.Flood:
			notes = fmt.Sprintf("each request a batch of %d lookup_knowledge calls; lookups run: %d", r.FloodCalls, r.FloodLookups)
		case r.Setup == "ragcore":
			notes = fmt.Sprintf("RAGcore received %d requests; its breaker %s", r.RAGcoreRequests, openClosed(r.BreakerOpen))
		case r.Setup == "dynamodb":
			notes = "store breaker " + openClosed(r.BreakerOpen)
		}
		early := "-"
		if r.P50Early > 0 {
			early = fmt.Sprintf("%.1f", ms(r.P50Early))
		}
		readBack := "-"
		if r.ReadChecked > 0 {
			readBack = fmt.Sprintf("%d/%d", r.TracesRead, r.ReadChecked)
		}
		fmt.Fprintf(w, row, r.Setup, r.Phase, strconv.Itoa(r.Requests), fmt.Sprintf("%.1f", r.Throughput()),
			fmt.Sprintf("%.1f", ms(r.P50)), fmt.Sprintf("%.1f", ms(r.P99)), fmt.Sprintf("%.1f", ms(r.Max)), early,
			counts(r.Codes), counts(r.L1), strconv.Itoa(r.TracesWritten), strconv.Itoa(r.TracesToLog), readBack, notes)
	}
	fmt.Fprint(w, Legend)
}

// Legend says what each column of Table is.
const Legend = `
requests     requests answered in the phase, whatever their status: POST /lookup (batch flood: POST /mcp)
req/s        requests per second of the phase
p50/p99/max  latency of one request, ms; p50 11-30: the median of the phase's lookups 11 to 30 in the
             order sent, the first ones after the phase's fault once a few have met it
HTTP status  status:count (none: no response)
l1 status    retrieval.l1.status of the lookups answered 200: count
stored       traces the store took: lookups answered whose trace was not logged (batch flood: the
             traces the in-memory store took)
logged       traces written whole to the log for replay instead: the store failed, outlived the
             trace wait, or its breaker was open
read back    traces read back through GET /invocations, of those sampled
`

func openClosed(open bool) string {
	if open {
		return "open"
	}
	return "closed"
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
