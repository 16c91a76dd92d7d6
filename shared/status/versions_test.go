package status_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/status"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// RAGcore still serves the versions in force on 2026-12-31 (access-failure 1.4) after 1.5 took
// effect: the status counts the procedures in force, lists the outdated source, and a
// verification cached before the switch is not read as one after it.
func TestStatusListsSourcesRAGcoreServesInAnOldVersion(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := testutil.LoadVersioned(t)
	var clock atomic.Pointer[time.Time]
	set := func(day string, hour int) {
		d, err := time.ParseInLocation(time.DateOnly, day, berlin)
		if err != nil {
			t.Fatal(err)
		}
		d = d.Add(time.Duration(hour) * time.Hour)
		clock.Store(&d)
	}
	now := func() time.Time { return *clock.Load() }
	// The memory store passes the store suite that DynamoDB Local runs (shared/store); the
	// switch against DynamoDB Local is in shared/indexsync's tests.
	for name, records := range map[string]func() status.Records{
		"memory": func() status.Records { return store.NewMemoryAt(now) },
	} {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, c.On("2026-12-31"))
			r.corpus = c // the service knows every version; RAGcore holds the old ones
			s := r.service(t, records(), status.Options{Now: now, TimeZone: berlin})

			set("2026-12-31", 23) // 23:00 in Berlin: 1.4 is in force, RAGcore is current
			st := statusOf(t, s)
			if st.SourceDocumentCount != 11 || len(st.Verification.Outdated) != 0 {
				t.Fatalf("on the eve: %d sources, outdated %v", st.SourceDocumentCount, st.Verification.Outdated)
			}

			set("2027-01-02", 10) // 1.5 took effect yesterday; the cache holds the eve's result
			lookups := r.lookups()
			st = statusOf(t, s)
			if st.Verification.Cache.Hit || r.lookups() == lookups {
				t.Error("the verification cached before the switch was read as today's")
			}
			want := []domain.OutdatedSource{{DocumentID: "access-failure", InForce: "1.5", Active: "1.4"}}
			if len(st.Verification.Outdated) != 1 || st.Verification.Outdated[0] != want[0] {
				t.Errorf("outdated %+v, want %+v", st.Verification.Outdated, want)
			}
			if st.SourceDocumentCount != 11 || st.DocumentCount == nil || *st.DocumentCount != 11 {
				t.Errorf("sources %d, document_count %v: an outdated source still counts as indexed", st.SourceDocumentCount, st.DocumentCount)
			}
			if st = statusOf(t, s); !st.Verification.Cache.Hit || len(st.Verification.Outdated) != 1 {
				t.Errorf("read back from the cache: hit %v, outdated %+v", st.Verification.Cache.Hit, st.Verification.Outdated)
			}

			set(testutil.AheadDay, 0) // the procedure written ahead is in force, RAGcore has none of it
			st = statusOf(t, s)
			if st.SourceDocumentCount != 12 || len(st.Verification.Missing) != 1 || st.Verification.Missing[0] != testutil.AheadID {
				t.Errorf("on %s: %d sources, missing %v", testutil.AheadDay, st.SourceDocumentCount, st.Verification.Missing)
			}
		})
	}
}

func statusOf(t *testing.T, s *status.Service) domain.Status {
	t.Helper()
	st, err := s.Status(context.Background(), "en", reader)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
