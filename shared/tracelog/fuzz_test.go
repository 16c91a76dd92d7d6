package tracelog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/tracelog"
)

// table is a trace table in memory.
type table struct {
	mu sync.Mutex
	m  map[string]lookup.Trace
}

func (p *table) PutTraceIfAbsent(_ context.Context, t lookup.Trace) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.m[t.InvocationID]; ok {
		return false, nil
	}
	p.m[t.InvocationID] = t
	return true, nil
}

func (p *table) GetTrace(_ context.Context, id string) (lookup.Trace, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.m[id]
	if !ok {
		return lookup.Trace{}, domain.ErrNotFound
	}
	return t, nil
}

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func replay(t *testing.T, in []byte) tracelog.Counts {
	t.Helper()
	r := tracelog.Replayer{Store: &table{m: map[string]lookup.Trace{}}, Rate: 1e6, Workers: 1,
		Log: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }}
	c, err := r.Replay(context.Background(), bytes.NewReader(in))
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	return c
}

func line(t testing.TB, id string) []byte {
	item, err := lookup.TraceItem(lookup.Trace{InvocationID: id, Tool: lookup.ToolLookup, ActorID: "a", ExpiresAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"level": "ERROR", "msg": "trace write failed", "trace": item})
	return b
}

// FuzzReplay: whatever the input, the replay reads it to its end without an error, every line
// is decided on its own (a line of garbage before the input changes no count but Skipped), and a
// whole trace line after the input is always stored.
func FuzzReplay(f *testing.F) {
	a := line(f, "A")
	for _, seed := range [][]byte{a, append(append([]byte("2026-12-01T17:00:00Z\t"), a...), '\n'), a[len(a)/3:], a[:len(a)/2],
		[]byte(`{"@timestamp":"t","@message":` + string(mustQuote(a)) + `}`),
		[]byte(`[{"@message":` + string(a) + `}, {`), []byte("@timestamp,@message\nt,\"{\"\"trace\"\":{}}\"\n"),
		[]byte(`{"results":[[{"field":"@message","value":` + string(mustQuote(a)) + `}]]}`),
		[]byte("    \"value\": " + string(mustQuote(a)) + ",\n"), []byte("\xef\xbb\xbf{\n  \"trace\": {\n}")} {
		f.Add(seed)
	}
	last := line(f, "FUZZ-LAST")
	f.Fuzz(func(t *testing.T, in []byte) {
		base := replay(t, in)
		lines := bytes.Count(in, []byte("\n")) + 1
		for _, n := range base.UnreadableLines {
			if n < 1 || n > lines {
				t.Fatalf("unreadable line %d of %d", n, lines)
			}
		}
		prefixed := replay(t, append([]byte("a line of text\n"), in...))
		prefixed.Skipped--
		for i := range prefixed.UnreadableLines {
			prefixed.UnreadableLines[i]--
		}
		if b, p := mustJSON(base), mustJSON(prefixed); b != p {
			t.Fatalf("a line before the input changed how it was read:\n%s\n%s", b, p)
		}
		if !bytes.Contains(in, []byte("FUZZ-LAST")) {
			after := replay(t, append(append(bytes.Clone(in), '\n'), last...))
			if after.Stored != base.Stored+1 {
				t.Fatalf("a whole trace line after the input: %d stored, want %d", after.Stored, base.Stored+1)
			}
		}
	})
}

func mustQuote(b []byte) []byte {
	q, _ := json.Marshal(string(b))
	return q
}

func mustJSON(c tracelog.Counts) string {
	b, _ := json.Marshal(c)
	return string(b)
}
