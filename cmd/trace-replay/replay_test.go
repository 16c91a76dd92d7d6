package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal/ddbtest"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/obs"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/tracelog"
)

// One DynamoDB Local serves every test of this package (ddbtest starts it on first use).
func TestMain(m *testing.M) { ddbtest.Main(m) }

// recording passes writes on to the store and keeps every trace it was given.
type recording struct {
	retrieval.TraceStore
	mu     sync.Mutex
	traces map[string]lookup.Trace
}

func (r *recording) PutTrace(ctx context.Context, t lookup.Trace) error {
	r.mu.Lock()
	r.traces[t.InvocationID] = t
	r.mu.Unlock()
	return r.TraceStore.PutTrace(ctx, t)
}

var questions = []struct{ lang, q string }{
	{"en", "There is a deep scratch and a dent on the rear door, how do I report the damage?"},
	{"en", "windscreen crack: which form do we fill in for the damage report?"},
	{"en", "flat tyre on the motorway, what now?"},
	{"en", "What is the capital of Australia?"},
	{"de", "Kratzer an der Tür, wie melde ich den Schaden?"},
	{"de", "Panne auf der Autobahn, was tun?"},
}

// downLog runs lookups and asks against a DynamoDB endpoint where nothing listens (a closed
// port) and returns the function's log and the traces the store was given.
func downLog(t *testing.T) ([]byte, map[string]lookup.Trace) {
	t.Helper()
	addr := testutil.ClosedAddr(t)
	client, err := store.NewDynamoClient(context.Background(), store.ClientOptions{Endpoint: "http://" + addr, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recording{TraceStore: store.NewDynamo(client, "knowledge", time.Second, nil), traces: map[string]lookup.Trace{}}
	corpus, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	ix := lexical.Build(corpus)
	logs := &bytes.Buffer{}
	var mu sync.Mutex
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return logs.Write(p) })
	svc := retrieval.New(ix, demo.New(ix), rec, retrieval.DefaultOptions(), obs.NewLogger(w, "info", "lookup-fn"))
	ctx := context.Background()
	actor := port.Actor{ID: "agent-7", Scopes: []string{"knowledge:read"}}
	ids := map[string]bool{}
	for i, q := range questions {
		res, err := svc.Lookup(ctx, lookup.LookupRequest{Question: q.q, Language: q.lang, TopK: 5, Actor: actor, CorrelationID: fmt.Sprint("c-", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids[res.InvocationID] = true
		ans, err := svc.Ask(ctx, lookup.AskRequest{Question: q.q, Language: q.lang, Actor: actor, CorrelationID: fmt.Sprint("a-", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids[ans.InvocationID] = true
	}
	if len(rec.traces) != 2*len(questions) || len(ids) != len(rec.traces) || svc.TraceFailures() != int64(len(ids)) {
		t.Fatalf("%d traces given to the store, %d calls, %d failures", len(rec.traces), len(ids), svc.TraceFailures())
	}
	return logs.Bytes(), rec.traces
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func sameTrace(t *testing.T, got, want lookup.Trace) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) || !got.ExpiresAt.Equal(want.ExpiresAt) || !got.CreatedAt.Equal(want.CreatedAt) {
		t.Errorf("trace %s changed:\n got %s\nwant %s", want.InvocationID, g, w)
	}
}

func TestStoreDownLogsEveryTraceWhole(t *testing.T) {
	logs, traces := downLog(t)
	found := 0
	for _, line := range bytes.Split(bytes.TrimSpace(logs), []byte("\n")) {
		var rec struct {
			Msg          string         `json:"msg"`
			InvocationID string         `json:"invocation_id"`
			Trace        map[string]any `json:"trace"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("not one JSON line: %v\n%s", err, line)
		}
		if rec.Trace == nil {
			continue
		}
		found++
		got, err := lookup.TraceFromItem(rec.Trace)
		if err != nil {
			t.Fatalf("logged trace does not decode: %v", err)
		}
		want, ok := traces[rec.InvocationID]
		if !ok || got.InvocationID != rec.InvocationID {
			t.Fatalf("logged trace %s was never given to the store", got.InvocationID)
		}
		sameTrace(t, got, want)
		if strings.Contains(string(line), "deep scratch") {
			t.Error("the log line holds the question text")
		}
	}
	if found != len(traces) {
		t.Fatalf("%d of %d traces in the log", found, len(traces))
	}
}

// table is a fresh DynamoDB Local table and the store on it.
func table(t *testing.T) (*store.Dynamo, string) {
	_, c := ddbtest.Local(t)
	name := ddbtest.NewTable(t, "replay")
	return store.NewDynamo(c, name, ddblocal.CallTimeout, nil), name
}

func replayer(s tracelog.Putter) tracelog.Replayer {
	return tracelog.Replayer{Store: s, Rate: 1000, Workers: 4, Log: slog.New(slog.DiscardHandler)}
}

func TestReplayStoresEveryTraceOnce(t *testing.T) {
	logs, traces := downLog(t)
	s, name := table(t)
	path := filepath.Join(t.TempDir(), "lookup.log")
	if err := os.WriteFile(path, logs, 0o600); err != nil {
		t.Fatal(err)
	}
	local, _ := ddbtest.Local(t)
	// The command itself, as an operator runs it against DynamoDB Local.
	var out, errOut bytes.Buffer
	args := []string{"-endpoint", local.Endpoint, "-table", name, "-rate", "500", "-timeout", ddblocal.CallTimeout.String(), path}
	if code := run(args, nil, &out, &errOut, func(string) string { return "" }); code != 0 {
		t.Fatalf("exit %d: %s %s", code, out.String(), errOut.String())
	}
	var c tracelog.Counts
	if err := json.Unmarshal(out.Bytes(), &c); err != nil {
		t.Fatalf("counts %q: %v", out.String(), err)
	}
	if c.Stored != len(traces) || c.AlreadyPresent != 0 || c.Unreadable != 0 || c.Failed != 0 {
		t.Fatalf("first replay %+v, want %d stored", c, len(traces))
	}
	for id, want := range traces {
		got, err := s.GetTrace(context.Background(), id)
		if err != nil {
			t.Fatalf("trace %s not in the table: %v", id, err)
		}
		sameTrace(t, got, want)
	}
	// Again, from stdin: every trace is there already, nothing is stored twice.
	out.Reset()
	args = []string{"-rate", "500", "-timeout", ddblocal.CallTimeout.String(), "-"}
	env := map[string]string{"DYNAMODB_ENDPOINT": local.Endpoint, "TABLE_NAME": name}
	if code := run(args, bytes.NewReader(logs), &out, &errOut, func(k string) string { return env[k] }); code != 0 {
		t.Fatalf("second replay exit %d: %s %s", code, out.String(), errOut.String())
	}
	c = tracelog.Counts{}
	_ = json.Unmarshal(out.Bytes(), &c)
	if c.Stored != 0 || c.AlreadyPresent != len(traces) {
		t.Fatalf("second replay %+v, want %d already present", c, len(traces))
	}
}

// exports turns a log into Logs Insights exports: CSV, a JSON array of rows, and
// GetQueryResults, with one line that is not a trace and one trace that is damaged.
func exports(t *testing.T, logs []byte) map[string][]byte {
	t.Helper()
	lines := bytes.Split(bytes.TrimSpace(logs), []byte("\n"))
	damaged := bytes.Replace(lines[0], []byte(`"pk":"INV#`), []byte(`"pk":"INV#X`), 1)
	if bytes.Equal(damaged, lines[0]) {
		t.Fatal("no pk in the first line")
	}
	msgs := []string{`{"level":"INFO","msg":"request","status":200}`, string(damaged)}
	for _, l := range lines {
		msgs = append(msgs, string(l))
	}
	ts := "2026-12-01 17:00:00.000"
	var csvOut bytes.Buffer
	w := csv.NewWriter(&csvOut)
	_ = w.Write([]string{"@timestamp", "@message"})
	var rows []map[string]string
	var results [][]map[string]string
	for _, m := range msgs {
		_ = w.Write([]string{ts, m})
		rows = append(rows, map[string]string{"@timestamp": ts, "@message": m})
		results = append(results, []map[string]string{{"field": "@timestamp", "value": ts}, {"field": "@message", "value": m}, {"field": "@ptr", "value": "CmAKJwoj"}})
	}
	w.Flush()
	arr, _ := json.MarshalIndent(rows, "", "  ")
	gqr, _ := json.MarshalIndent(map[string]any{"results": results, "status": "Complete"}, "", "    ")
	return map[string][]byte{"csv": csvOut.Bytes(), "json": arr, "get-query-results": gqr}
}

func TestLogsInsightsExportsReplay(t *testing.T) {
	logs, traces := downLog(t)
	for kind, data := range exports(t, logs) {
		t.Run(kind, func(t *testing.T) {
			s, _ := table(t)
			c, err := replayer(s).Replay(context.Background(), bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if c.Stored != len(traces) || c.Unreadable != 1 || c.Skipped != 1 || c.Failed != 0 {
				t.Fatalf("%+v, want %d stored, 1 unreadable, 1 skipped", c, len(traces))
			}
			for id, want := range traces {
				got, err := s.GetTrace(context.Background(), id)
				if err != nil {
					t.Fatalf("trace %s not in the table: %v", id, err)
				}
				sameTrace(t, got, want)
			}
		})
	}
}

func traceLine(t *testing.T, id string, expires time.Time) string {
	t.Helper()
	item, err := lookup.TraceItem(lookup.Trace{InvocationID: id, Tool: lookup.ToolLookup, ActorID: "a", ExpiresAt: expires})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"level": "ERROR", "msg": "trace write failed", "trace": item})
	return string(b)
}

func TestInputForms(t *testing.T) {
	later := time.Now().Add(time.Hour)
	a, b := traceLine(t, "A", later), traceLine(t, "B", later)
	old := traceLine(t, "OLD", time.Now().Add(-time.Hour))
	other := strings.Replace(a, `"actor_id":"a"`, `"actor_id":"someone-else"`, 1)
	if other == a {
		t.Fatal("no actor_id in the trace line")
	}
	indented := indent(t, a)
	traceKeyLine := slices.IndexFunc(strings.Split(indented, "\n"), func(l string) bool { return strings.Contains(l, `"trace": {`) }) + 1
	for _, c := range []struct {
		name, input string
		want        tracelog.Counts
	}{
		{"lines with a timestamp prefix and plain text between",
			"2026-12-01T17:00:00Z\t" + a + "\nSTART RequestId: 1 Version: $LATEST\n\n" + b + "\n" + a + "\n",
			tracelog.Counts{Stored: 2, AlreadyPresent: 1, Skipped: 1}},
		{"a broken trace line", `{"msg":"x","trace":{"invocation_id":"C"}}` + "\n" + `{"trace": [` + "\n",
			tracelog.Counts{Unreadable: 2, UnreadableLines: []int{1, 2}}},
		{"an expired trace", old + "\n", tracelog.Counts{Expired: 1}},
		{"newline-delimited export rows", fmt.Sprintf(`{"@timestamp":"t","@message":%q}`+"\n", a), tracelog.Counts{Stored: 1}},
		{"GetQueryResults on one line", fmt.Sprintf(`{"results":[[{"field":"@timestamp","value":"t"},{"field":"@message","value":%q}]],"status":"Complete"}`, b),
			tracelog.Counts{Stored: 1}},
		{"CSV with a BOM and more columns", "\xef\xbb\xbf@timestamp,@logStream,@message\n" +
			"t,s,\"" + strings.ReplaceAll(a, `"`, `""`) + "\"\n", tracelog.Counts{Stored: 1}},
		{"JSON rows with @message as an object", fmt.Sprintf(`[{"@timestamp":"t","@message":%s}]`, b), tracelog.Counts{Stored: 1}},
		{"an indented log record and an array after it", indented + "\n" + fmt.Sprintf("[%s, %s]", b, old),
			tracelog.Counts{Stored: 1, Expired: 1, Unreadable: 1, UnreadableLines: []int{traceKeyLine}}},
		{"a JSON export cut short", fmt.Sprintf("[%s, {", a), tracelog.Counts{Stored: 1}},
		{"a first line cut at the front", a[40:] + "\n" + b + "\n", tracelog.Counts{Stored: 1, Unreadable: 1, UnreadableLines: []int{1}}},
		{"a first line cut at the end", a[:len(a)/2] + "\n" + b + "\n", tracelog.Counts{Stored: 1, Unreadable: 1, UnreadableLines: []int{1}}},
		{"a first line cut to look like an export", `{"@message": "` + a[:60] + "\n" + b + "\n" + a + "\n",
			tracelog.Counts{Stored: 2, Unreadable: 1, UnreadableLines: []int{1}}},
		{"a first line cut inside a CSV row", `,"` + strings.ReplaceAll(a[30:], `"`, `""`) + "\"\n" + b + "\n",
			tracelog.Counts{Stored: 1, Unreadable: 1, UnreadableLines: []int{1}}},
		{"a conflicting copy", a + "\n" + other + "\n" + a + "\n",
			tracelog.Counts{Stored: 1, AlreadyPresent: 1, Conflicting: 1, ConflictingIDs: []string{"A"}}},
		{"a line longer than MaxLine between traces", a + "\n" + `{"msg":"` + strings.Repeat("x", tracelog.MaxLine) + `"}` + "\n" + b,
			tracelog.Counts{Stored: 2, Unreadable: 1, UnreadableLines: []int{2}}},
		{"CRLF line ends", a + "\r\n" + b + "\r\n", tracelog.Counts{Stored: 2}},
		{"empty", "", tracelog.Counts{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// One worker: the copies of one id are put in the order they were read.
			r := tracelog.Replayer{Store: store.NewMemory(), Rate: 1000, Workers: 1, Log: slog.New(slog.DiscardHandler)}
			got, err := r.Replay(context.Background(), strings.NewReader(c.input))
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("%+v %v, want %+v", got, err, c.want)
			}
		})
	}
}

// TestCutFirstLineAndALongLine: a log whose first line is cut short, which holds a 2 MiB line, and
// a trace line cut in the middle of the log: the three whole traces are stored, on DynamoDB Local
// (the command itself) and in memory, and the lines that could not be read are named.
func TestCutFirstLineAndALongLine(t *testing.T) {
	logs, traces := downLog(t)
	var whole [][]byte
	for _, l := range bytes.Split(bytes.TrimSpace(logs), []byte("\n")) {
		if bytes.Contains(l, []byte(`"trace":{`)) {
			whole = append(whole, l)
		}
	}
	if len(whole) < 5 {
		t.Fatalf("%d trace lines", len(whole))
	}
	long := `{"level":"INFO","msg":"a long line","detail":"` + strings.Repeat("ä", 1<<20) + `"}` // 2 MiB
	input := strings.Join([]string{
		string(whole[3][len(whole[3])/3:]), // line 1: the log begins in the middle of a line
		string(whole[0]),
		long,
		string(whole[1]),
		string(whole[4][:len(whole[4])/2]), // line 5: a line cut short
		string(whole[2]),
	}, "\n")
	want := tracelog.Counts{Stored: 3, Unreadable: 2, UnreadableLines: []int{1, 5}, Skipped: 1}
	stored := func(t *testing.T, s tracelog.Putter) {
		t.Helper()
		for _, l := range whole[:3] {
			var rec struct {
				ID string `json:"invocation_id"`
			}
			_ = json.Unmarshal(l, &rec)
			got, err := s.GetTrace(context.Background(), rec.ID)
			if err != nil {
				t.Fatalf("trace %s not stored: %v", rec.ID, err)
			}
			sameTrace(t, got, traces[rec.ID])
		}
	}
	t.Run("memory", func(t *testing.T) {
		s := store.NewMemory()
		got, err := replayer(s).Replay(context.Background(), strings.NewReader(input))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%+v %v, want %+v", got, err, want)
		}
		stored(t, s)
	})
	t.Run("dynamodb", func(t *testing.T) {
		s, name := table(t)
		local, _ := ddbtest.Local(t)
		var out, errOut bytes.Buffer
		code := run([]string{"-endpoint", local.Endpoint, "-table", name, "-timeout", ddblocal.CallTimeout.String(), "-"}, strings.NewReader(input), &out, &errOut,
			func(string) string { return "" })
		var got tracelog.Counts
		if err := json.Unmarshal(out.Bytes(), &got); err != nil || code != 1 || !reflect.DeepEqual(got, want) {
			t.Fatalf("exit %d, %+v %v, want 1 and %+v\n%s", code, got, err, want, errOut.String())
		}
		for _, line := range []string{`"line":1`, `"line":5`} {
			if !strings.Contains(errOut.String(), line) {
				t.Errorf("the log does not name %s:\n%s", line, errOut.String())
			}
		}
		stored(t, s)
	})
}

// TestLargestTraceLineIsRead: a trace line of 3 MiB, more than any storable trace's line and under
// MaxLine, is read whole.
func TestLargestTraceLineIsRead(t *testing.T) {
	item, err := lookup.TraceItem(lookup.Trace{InvocationID: "BIG", Tool: lookup.ToolLookup, ActorID: "a",
		ExpiresAt: time.Now().Add(time.Hour), RetrievalDetails: lookup.TraceDetails{
			L0: lookup.L0Hints{MatchedKeywords: []string{strings.Repeat("\u0001", 1<<19)}}}}) // 6 bytes each in JSON
	if err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(map[string]any{"level": "ERROR", "msg": "trace write failed", "trace": item})
	if len(line) < 3<<20 || len(line) > tracelog.MaxLine {
		t.Fatalf("the line is %d bytes", len(line))
	}
	s := store.NewMemory()
	got, err := replayer(s).Replay(context.Background(), bytes.NewReader(line))
	if err != nil || got.Stored != 1 {
		t.Fatalf("%+v %v", got, err)
	}
}

func TestFlagsAreChecked(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(nil, strings.NewReader(""), &out, &errOut, func(string) string { return "" }); code != 2 || !strings.Contains(errOut.String(), "no table") {
		t.Errorf("no table: exit %d %s", code, errOut.String())
	}
	if code := run([]string{"-table", "t", "-rate", "0"}, strings.NewReader(""), &out, &errOut, func(string) string { return "" }); code != 2 {
		t.Errorf("rate 0: exit %d", code)
	}
}

func indent(t *testing.T, line string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(line), "", "  "); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
