package retrieval_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// BenchmarkLookup measures one lookup on the embedded corpus in-process: analysis, L0, demo BM25,
// fusion, relevance and the trace write to the in-memory store.
func BenchmarkLookup(b *testing.B) {
	ix := index(b)
	svc := retrieval.New(ix, demo.New(ix), store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, q := range []struct{ name, lang, question string }{
		{"en", "en", "A customer found a deep scratch on the rear door before the trip. What do we do?"},
		{"de", "de", "Akku unter 10 Prozent, Kunde steht an der Ladesäule und das Ladekabel steckt fest"},
	} {
		b.Run(q.name, func(b *testing.B) {
			req := retrieval.LookupRequest{Question: q.question, Language: q.lang, TopK: 5, Actor: retrieval.Actor{ID: "bench"}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := svc.Lookup(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
