package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store/storetest"
)

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Records { return store.NewMemoryAt(now) })
}

func TestMemoryTracesStayBounded(t *testing.T) {
	clock := storetest.NewClock(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC))
	m := store.NewMemoryAt(clock.Now)
	for i := range 10050 {
		clock.Advance(time.Millisecond)
		tr := retrieval.Trace{InvocationID: "id-" + time.Duration(i).String(), CreatedAt: clock.Now(), ExpiresAt: clock.Now().Add(time.Hour)}
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
}
