package indexsync_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ragcorefake"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/indexsync"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/ragcore"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/status"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

var ns = domain.Namespace{Tenant: "northstar-mobility-demo", Workspace: "mobilityops", Collection: "internal-procedures"}

// TestSyncEndsWithinItsBudget: against a RAGcore that takes far longer than the budget, a sync
// through the API answers on time with every upload reported as a timeout, instead of running
// into API Gateway's 30 s limit.
func TestSyncEndsWithinItsBudget(t *testing.T) {
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	fake := ragcorefake.New(ragcorefake.Options{Token: "t"})
	fake.SetFaults(ragcorefake.Faults{Paths: []string{"/v1/sources/"}, Latency: time.Minute})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	client, err := ragcore.New(ragcore.Options{BaseURL: srv.URL, Token: "t", Timeout: 10 * time.Second,
		Namespace: ns, // the one namespace type
		// This test is about the budget: the breaker (which would refuse the German uploads after
		// the English timeouts, see shared/app TestUnreachableRAGcoreIs503AndL1Unavailable) stays out of the way.
		Breaker: ragcore.BreakerOptions{Failures: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	p := ragcore.NewProvider(client, c, ragcore.ProviderOptions{})
	records := store.NewMemory()
	log := slog.New(slog.DiscardHandler)
	st := status.New(c, p, p, records, status.Options{Namespace: ns}, log)
	s := indexsync.New(c, p, records, st, ns, log).WithBudget(300 * time.Millisecond)
	start := time.Now()
	run, err := s.Sync(context.Background(), port.Call{Actor: port.Actor{ID: "op", Scopes: []string{"knowledge:sync"}}}, "all")
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("sync took %v with a 300 ms budget", took)
	}
	if err != nil || len(run.Results) != 2 {
		t.Fatalf("run %+v, %v", run, err)
	}
	for _, r := range run.Results {
		if len(r.Failed) != r.Documents || r.Failed[0].Reason != "timeout" {
			t.Errorf("%s: %+v", r.Language, r)
		}
	}
}
