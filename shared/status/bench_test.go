package status_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ragcorefake"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/status"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// generated writes a corpus of n procedures per language, copies of the embedded ones under new
// ids, and loads it through knowledge.LoadDir as KNOWLEDGE_DIR would.
func generated(b *testing.B, n int) *knowledge.Corpus {
	b.Helper()
	c, err := knowledge.Embedded()
	if err != nil {
		b.Fatal(err)
	}
	return testutil.WriteCorpus(b, func(lang string) map[string]string {
		files := map[string]string{}
		docs := c.Documents(lang)
		for i := range n {
			d := docs[i%len(docs)]
			id := fmt.Sprintf("%s-%04d", d.ID, i)
			files[id] = strings.Replace(string(d.Raw), "id: "+d.ID+"\n", "id: "+id+"\n", 1)
		}
		return files
	})
}

// BenchmarkVerify1000Sources verifies 1,000 managed sources against a RAGcore that takes 50 ms
// per identity lookup, at VERIFY_CONCURRENCY 16. The target is 1.3 x ceil(1000/16) x 50 ms.
func BenchmarkVerify1000Sources(b *testing.B) {
	const sources, limit, latency = 1000, 16, 50 * time.Millisecond
	r := newRig(b, generated(b, sources))
	r.fake.SetFaults(ragcorefake.Faults{Paths: []string{"/v1/documents"}, Latency: latency})
	s := r.service(b, store.NewMemory(), status.Options{Concurrency: limit, Budget: time.Minute})
	bound := 1.3 * math.Ceil(float64(sources)/limit) * float64(latency.Milliseconds())
	for b.Loop() {
		v, err := s.Refresh(context.Background(), "en", reader)
		if err != nil || !v.Complete || v.Confirmed != sources {
			b.Fatalf("verification %+v, %v", v, err)
		}
	}
	perOp := float64(b.Elapsed().Milliseconds()) / float64(b.N)
	b.ReportMetric(perOp, "ms/verification")
	b.ReportMetric(bound, "target_ms")
	b.ReportMetric(perOp/bound, "share_of_target")
}
