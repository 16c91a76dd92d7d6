package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/obs"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// hanging is a table that hangs: trace writes and reads block until their context ends or the
// test releases them. It counts the calls that reached it and those still blocked.
type hanging struct {
	*store.Memory
	release chan struct{}
	calls   atomic.Int64
	blocked atomic.Int64
	// answer, when set, ends a call at once with the error it points to (nil: the call
	// succeeds) instead of hanging.
	answer atomic.Pointer[error]
}

func newHanging(t *testing.T) *hanging {
	h := &hanging{Memory: store.NewMemory(), release: make(chan struct{})}
	t.Cleanup(func() { close(h.release) })
	return h
}

func (h *hanging) wait(ctx context.Context) error {
	h.calls.Add(1)
	if err := h.answer.Load(); err != nil {
		return *err
	}
	h.blocked.Add(1)
	defer h.blocked.Add(-1)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-h.release:
		return errors.New("released by the test")
	}
}

func (h *hanging) PutTrace(ctx context.Context, t lookup.Trace) error {
	if err := h.wait(ctx); err != nil {
		return err
	}
	return h.Memory.PutTrace(ctx, t)
}

func (h *hanging) GetTrace(ctx context.Context, id string) (lookup.Trace, error) {
	if err := h.wait(ctx); err != nil {
		return lookup.Trace{}, err
	}
	return h.Memory.GetTrace(ctx, id)
}

func (h *hanging) answerWith(err error) { h.answer.Store(&err) }

var (
	ixOnce sync.Once
	ix     *lexical.Index
)

func lookupService(t *testing.T, traces retrieval.TraceStore, logs *testutil.SyncBuffer) *retrieval.Service {
	t.Helper()
	ixOnce.Do(func() {
		c, err := knowledge.Embedded()
		if err != nil {
			panic(err)
		}
		ix = lexical.Build(c)
	})
	return retrieval.New(ix, demo.New(ix), traces, retrieval.DefaultOptions(), obs.NewLogger(logs, "info", "lookup"))
}

// logLines splits what the service logged into its lines.
func logLines(b *testutil.SyncBuffer) [][]byte {
	return bytes.Split(bytes.TrimSpace([]byte(b.String())), []byte("\n"))
}

func loggedTraces(t *testing.T, logs *testutil.SyncBuffer) map[string]lookup.Trace {
	t.Helper()
	out := map[string]lookup.Trace{}
	for _, line := range logLines(logs) {
		var rec struct {
			Trace map[string]any `json:"trace"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("not a JSON line: %s", line)
		}
		if rec.Trace == nil {
			continue
		}
		tr, err := lookup.TraceFromItem(rec.Trace)
		if err != nil {
			t.Fatalf("a logged trace does not decode: %v", err)
		}
		out[tr.InvocationID] = tr
	}
	return out
}

// TestHangingStoreCostsLookupsNothing: the table hangs. The first lookups' writes hold them
// only for the wait, and open the breaker; from then on no lookup calls the table at all. Every
// trace of the 30 lookups is in the log, whole.
func TestHangingStoreCostsLookupsNothing(t *testing.T) {
	table := newHanging(t)
	logs := &testutil.SyncBuffer{}
	guarded := store.Guard(table, store.GuardOptions{Wait: 5 * time.Millisecond, Failures: 5, Cooldown: time.Hour})
	svc := lookupService(t, guarded, logs)
	actor := port.Actor{ID: "agent-7", Scopes: []string{"knowledge:read"}}
	questions := []string{"flat tyre on the motorway, what now?", "There is a deep scratch on the rear door, how do I report the damage?"}
	ids := make([]string, 30)
	callsBefore := make([]int64, 30)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for i := range ids {
			callsBefore[i] = table.calls.Load()
			res, err := svc.Lookup(context.Background(), lookup.LookupRequest{Question: questions[i%2], Language: "en", TopK: 3,
				Actor: actor, CorrelationID: fmt.Sprint("c-", i)})
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = res.InvocationID
		}
	}()
	select {
	case <-finished:
	case <-time.After(time.Minute): // a deadlock guard, not a measure: the table never answers
		t.Fatal("the lookups wait for a table that never answers")
	}
	if n := table.calls.Load(); n != 5 {
		t.Fatalf("the table was called %d times, want only the 5 writes that opened the breaker", n)
	}
	if n := table.blocked.Load(); n != 5 {
		t.Errorf("%d of the 5 writes are still blocked in the table; each lookup went on without waiting for it", n)
	}
	for i := 10; i < 30; i++ { // lookups 11 to 30 never reached the table
		if callsBefore[i] != 5 {
			t.Errorf("lookup %d: %d calls to the table before it", i+1, callsBefore[i])
		}
	}
	if !guarded.BreakerOpen() || svc.TraceFailures() != 30 {
		t.Errorf("breaker open %v, %d traces to the log; want open and 30", guarded.BreakerOpen(), svc.TraceFailures())
	}
	logged := loggedTraces(t, logs)
	for i, id := range ids {
		tr, ok := logged[id]
		if !ok || tr.Tool != lookup.ToolLookup || tr.ActorID != "agent-7" || len(tr.RetrievalDetails.EvidenceSummaries) == 0 {
			t.Errorf("lookup %d (%s): trace not in the log whole: %+v", i+1, id, tr)
		}
	}
	// Reads are refused at once too.
	if _, err := guarded.GetTrace(context.Background(), ids[0]); !errors.Is(err, store.ErrCircuitOpen) || table.calls.Load() != 5 {
		t.Errorf("a read with the breaker open: %v, %d calls", err, table.calls.Load())
	}
	if err := guarded.Probe(context.Background()); !errors.Is(err, store.ErrCircuitOpen) {
		t.Errorf("probe with the breaker open: %v", err)
	}
}

// TestPendingWriteGoesOnInTheBackground: a write that outlives the wait is reported as not done
// (the caller logs the trace), and still lands in the table when the table answers, after the
// caller's request has ended.
func TestPendingWriteGoesOnInTheBackground(t *testing.T) {
	slow := &gate{Memory: store.NewMemory(), open: make(chan struct{}), done: make(chan struct{})}
	guarded := store.Guard(slow, store.GuardOptions{Wait: time.Millisecond, Failures: 5, Cooldown: time.Hour})
	tr := lookup.Trace{InvocationID: "LATE", ExpiresAt: time.Now().Add(time.Hour)}
	ctx, cancel := context.WithCancel(context.Background())
	if err := guarded.PutTrace(ctx, tr); err == nil {
		t.Fatal("a write still running was reported done")
	}
	cancel() // the request ends
	close(slow.open)
	<-slow.done
	if _, err := slow.Memory.GetTrace(context.Background(), "LATE"); err != nil {
		t.Fatalf("the pending write did not land: %v", err)
	}
}

// gate is a table whose writes wait until open is closed.
type gate struct {
	*store.Memory
	open, done chan struct{}
}

func (g *gate) PutTrace(ctx context.Context, t lookup.Trace) error {
	<-g.open
	defer close(g.done)
	return g.Memory.PutTrace(ctx, t)
}

// TestWhatCountsAgainstTheTable: an absent trace, a record refused as invalid and a reader that
// went away are the table answering (or no fault of it); errors are failures; after the
// cool-down one good call closes the breaker again.
// It runs in a synctest bubble, so that the cool-down ends only when the test sleeps through it,
// however slowly the machine runs the steps before.
func TestWhatCountsAgainstTheTable(t *testing.T) { synctest.Test(t, whatCountsAgainstTheTable) }

func whatCountsAgainstTheTable(t *testing.T) {
	table := newHanging(t)
	const cooldown = 10 * time.Millisecond
	guarded := store.Guard(table, store.GuardOptions{Wait: time.Minute, Failures: 2, Cooldown: cooldown})
	ctx := context.Background()
	for _, err := range []error{domain.ErrNotFound, store.ErrInvalid, context.Canceled, domain.ErrNotFound, store.ErrInvalid} {
		table.answerWith(err)
		_, _ = guarded.GetTrace(ctx, "X")
		_ = guarded.PutTrace(ctx, lookup.Trace{InvocationID: "X"})
	}
	if guarded.BreakerOpen() {
		t.Fatal("answers of the table opened the breaker")
	}
	table.answerWith(errors.New("operation error DynamoDB: PutItem, exceeded maximum number of attempts"))
	_ = guarded.PutTrace(ctx, lookup.Trace{InvocationID: "X"})
	_, _ = guarded.GetTrace(ctx, "X")
	if !guarded.BreakerOpen() {
		t.Fatal("two failures in a row did not open the breaker")
	}
	calls := table.calls.Load()
	if err := guarded.PutTrace(ctx, lookup.Trace{InvocationID: "X"}); !errors.Is(err, store.ErrCircuitOpen) || table.calls.Load() != calls {
		t.Fatalf("a write with the breaker open: %v, the table called %d times more", err, table.calls.Load()-calls)
	}
	time.Sleep(cooldown + time.Millisecond)
	table.answerWith(nil) // the table answers again: the probe's write succeeds
	if err := guarded.PutTrace(ctx, lookup.Trace{InvocationID: "X", ExpiresAt: time.Now().Add(time.Hour)}); err != nil || guarded.BreakerOpen() {
		t.Fatalf("the probe after the cool-down: %v, breaker open %v", err, guarded.BreakerOpen())
	}
}
