package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/bench/gen"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// versionDates are the 25 effective dates of the versioned corpora, every 14 days from a day
// after every effective date the generator writes: 26 sets of versions in force, more than a
// function keeps at 10,000 procedures.
func versionDates() []string {
	out := make([]string, 25)
	for i := range out {
		out[i] = time.Date(2026, 4, 6, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 14*i).Format(time.DateOnly)
	}
	return out
}

// versioned generates a corpus of n procedures with a version of one id in ten (both languages)
// on the 25 versionDates, and returns it with its index of every version.
func versioned(b *testing.B, n int) (*knowledge.Corpus, *lexical.Index) {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "corpus")
	if _, err := gen.Write(dir, n, gen.DefaultSeed); err != nil {
		b.Fatal(err)
	}
	if _, err := gen.AddVersions(dir, max(1, n/20), versionDates()); err != nil {
		b.Fatal(err)
	}
	c, err := knowledge.LoadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	return c, lexical.BuildAll(c)
}

// BenchmarkDayView is the view of the index of every version onto a day's versions in force
// (lexical.Index.Project), as a lookup of a set not kept makes it: both languages, the days
// taken in turn.
func BenchmarkDayView(b *testing.B) {
	for _, n := range benchSizes(b) {
		b.Run(fmt.Sprintf("size=%d", n), func(b *testing.B) {
			c, all := versioned(b, n)
			var days []*knowledge.Corpus
			for _, d := range versionDates() {
				days = append(days, c.On(d))
			}
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				if _, ok := all.Project(days[i%len(days)]); !ok {
					b.Fatal("no view")
				}
				i++
			}
		})
	}
}

// BenchmarkLookupCyclingAsOf is a lookup whose as_of cycles over the 26 sets in force of the
// versioned corpus ("cycling": with the bound a 256 MB function has, every lookup makes its
// set's view) against the same lookup of today ("today").
func BenchmarkLookupCyclingAsOf(b *testing.B) {
	qs, err := questions()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range benchSizes(b) {
		c, all := versioned(b, n)
		days := append([]string{"2026-03-20"}, versionDates()...)
		for _, cycle := range []bool{false, true} {
			b.Run(fmt.Sprintf("size=%d/cycling=%v", n, cycle), func(b *testing.B) {
				epochs := lexical.NewEpochs(c, nil, nil, lexical.DefaultEpochs).WithBase(all).WithByteBound(230 << 20 / 16)
				svc := retrieval.New(nil, demo.WithEpochs(epochs), store.NewMemory(), retrieval.DefaultOptions(),
					slog.New(slog.NewTextHandler(io.Discard, nil))).WithVersions(epochs, time.UTC, 30).
					WithClock(func() time.Time { return time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC) })
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					q := qs[i%len(qs)]
					req := lookup.LookupRequest{Question: q.Question, Language: q.Language, TopK: 5, Actor: port.Actor{ID: "bench"}}
					if cycle {
						req.AsOf = days[i%len(days)]
					}
					i++
					if _, err := svc.Lookup(context.Background(), req); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(epochs.Builds())/float64(b.N), "sets-made/op")
			})
		}
	}
}
