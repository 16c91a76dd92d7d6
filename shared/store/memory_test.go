package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store/storetest"
)

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Records { return store.NewMemoryAt(now) })
}

func TestMemoryTracesStayBounded(t *testing.T) {
	clock := storetest.NewClock(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC))
	logs := &bytes.Buffer{}
	m := store.NewMemoryAt(clock.Now).WithLogger(slog.New(slog.NewJSONHandler(logs, nil)))
	for i := range 10050 {
		clock.Advance(time.Millisecond)
		tr := lookup.Trace{InvocationID: "id-" + time.Duration(i).String(), CreatedAt: clock.Now(), ExpiresAt: clock.Now().Add(time.Hour)}
		if err := m.PutTrace(context.Background(), tr); err != nil {
			t.Fatal(err)
		}
	}
	if n := m.Len(); n > 10000 {
		t.Fatalf("%d traces kept", n)
	}
	if _, err := m.GetTrace(context.Background(), "id-10.049µs"); err != nil {
		t.Fatalf("the newest trace was dropped: %v", err)
	}
	// 10,000 fit; the 10,001st write drops the oldest tenth (1,001 traces) in one burst: one
	// warning, and every dropped trace counted.
	if _, err := m.GetTrace(context.Background(), "id-0s"); err == nil {
		t.Error("the oldest trace is still there")
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d log lines for one eviction burst, want 1:\n%s", len(lines), logs)
	}
	var rec struct {
		Level        string    `json:"level"`
		Dropped      int64     `json:"dropped"`
		EvictedTotal int64     `json:"evicted_total"`
		Oldest       time.Time `json:"oldest_created_at"`
		Newest       time.Time `json:"newest_dropped_created_at"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Level != "WARN" || rec.Dropped != 1001 || rec.EvictedTotal != 1001 || m.Evicted() != 1001 {
		t.Errorf("eviction reported as %+v, counter %d; want 1001 dropped", rec, m.Evicted())
	}
	// The first and the 1,001st trace written, a millisecond apart each.
	start := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	if want := start.Add(time.Millisecond); !rec.Oldest.Equal(want) {
		t.Errorf("oldest dropped created at %v, want %v", rec.Oldest, want)
	}
	if want := start.Add(1001 * time.Millisecond); !rec.Newest.Equal(want) {
		t.Errorf("newest dropped created at %v, want %v", rec.Newest, want)
	}
	if _, err := m.GetTrace(context.Background(), "id-1.001µs"); err != nil {
		t.Errorf("the 1,002nd trace was dropped with the oldest tenth: %v", err)
	}
	if n := m.Len(); int64(n)+m.Evicted() != 10050 {
		t.Errorf("%d kept + %d evicted != 10050 written", n, m.Evicted())
	}
}

func TestMemoryExpiredTracesAreNotCountedAsEvicted(t *testing.T) {
	clock := storetest.NewClock(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC))
	logs := &bytes.Buffer{}
	m := store.NewMemoryAt(clock.Now).WithLogger(slog.New(slog.NewJSONHandler(logs, nil)))
	for i := range 10001 {
		tr := lookup.Trace{InvocationID: "x-" + time.Duration(i).String(), CreatedAt: clock.Now(), ExpiresAt: clock.Now().Add(time.Minute)}
		if i == 10000 {
			clock.Advance(time.Hour) // everything before has expired
			tr.CreatedAt, tr.ExpiresAt = clock.Now(), clock.Now().Add(time.Minute)
		}
		if err := m.PutTrace(context.Background(), tr); err != nil {
			t.Fatal(err)
		}
	}
	if m.Evicted() != 0 || logs.Len() != 0 || m.Len() != 1 {
		t.Errorf("expired traces dropped as losses: evicted %d, kept %d, log %s", m.Evicted(), m.Len(), logs)
	}
}
