package retrieval_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
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

// BenchmarkLookupLargeCorpus measures a lookup on a corpus twenty times the embedded one (220
// procedures per language), loaded through knowledge.LoadDir as KNOWLEDGE_DIR would.
func BenchmarkLookupLargeCorpus(b *testing.B) {
	c, err := knowledge.Embedded()
	if err != nil {
		b.Fatal(err)
	}
	large := testutil.WriteCorpus(b, func(lang string) map[string]string {
		files := map[string]string{}
		for _, d := range c.Documents(lang) {
			for i := range 20 {
				id := fmt.Sprintf("%s-%02d", d.ID, i)
				files[id] = strings.Replace(string(d.Raw), "id: "+d.ID+"\n", "id: "+id+"\n", 1)
			}
		}
		return files
	})
	ix := lexical.Build(large)
	svc := retrieval.New(ix, demo.New(ix), store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	req := retrieval.LookupRequest{Question: "A customer found a deep scratch on the rear door before the trip. What do we do?", Language: "en", TopK: 5, Actor: retrieval.Actor{ID: "bench"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := svc.Lookup(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}
