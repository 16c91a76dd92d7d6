package retrieval_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/northstar-mobility/mobilityops-knowledge/eval"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/span"
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
			req := lookup.LookupRequest{Question: q.question, Language: q.lang, TopK: 5, Actor: port.Actor{ID: "bench"}}
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
	req := lookup.LookupRequest{Question: "A customer found a deep scratch on the rear door before the trip. What do we do?", Language: "en", TopK: 5, Actor: port.Actor{ID: "bench"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := svc.Lookup(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLookupWorstCase measures lookups of the most expensive questions within the limits of the
// API (at most 2000 characters as received and NFKC-normalised: request.QuestionAndLanguage
// accepts each) beside a typical one. Each iteration marks every word with a fresh tag, so that
// the stem cache does not hide the cost of a question never seen before.
func BenchmarkLookupWorstCase(b *testing.B) {
	ix := index(b)
	svc := retrieval.New(ix, demo.New(ix), store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, q := range worstQuestions() {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				b.StopTimer()
				question := q.question(tag(i))
				if _, _, _, err := request.QuestionAndLanguage(&question, &q.lang); err != nil {
					b.Fatalf("%s is refused by the API: %s", q.name, err.Message)
				}
				b.StartTimer()
				req := lookup.LookupRequest{Question: question, Language: q.lang, TopK: 5, Actor: port.Actor{ID: "bench"}}
				if _, err := svc.Lookup(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// tag returns three letters that differ for every i below 26³.
func tag(i int) string {
	return string([]byte{'a' + byte(i/676%26), 'a' + byte(i/26%26), 'a' + byte(i%26)})
}

type worstQuestion struct {
	name, lang string
	question   func(tag string) string
}

// fill repeats word (with tag prefixed and sep after) up to 2000 characters.
func fill(tag, word, sep string) string {
	var b strings.Builder
	n := 0
	for i := 0; ; i++ {
		w := word + sep
		if i == 0 || sep != "" {
			w = tag + w
		}
		if n += utf8.RuneCountInString(w); n > 2000 {
			return b.String()
		}
		b.WriteString(w)
	}
}

// words joins distinct words, each prefixed with tag, up to 2000 characters.
func words(tag string, next func(i int) string) string {
	var b strings.Builder
	n := 0
	for i := 0; ; i++ {
		w := tag + next(i) + " "
		if n += utf8.RuneCountInString(w); n > 2000 {
			return b.String()
		}
		b.WriteString(w)
	}
}

// parts are compound parts the German corpus knows on their own.
var parts = []string{"schaden", "kabel", "lade", "scheibe", "akku", "reifen", "fahrzeug", "werkstatt", "kunde", "unfall", "schlüssel", "tür"}

// compound returns a distinct compound of n parts for every i below len(parts)^n.
func compound(i, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(parts[i%len(parts)])
		i /= len(parts)
	}
	return b.String()
}

func worstQuestions() []worstQuestion {
	return []worstQuestion{
		{"typical-de", "de", func(string) string {
			return "Akku unter 10 Prozent, Kunde steht an der Ladesäule und das Ladekabel steckt fest"
		}},
		{"typical-en", "en", func(string) string {
			return "A customer found a deep scratch on the rear door before the trip. What do we do?"
		}},
		{"one-long-word-de", "de", func(t string) string { return fill(t, "schadens", "") }},
		{"one-long-word-en", "en", func(t string) string { return fill(t, "damages", "") }},
		{"distinct-compounds-de", "de", func(t string) string { return words(t, func(i int) string { return compound(i, 3) }) }},
		{"distinct-long-compounds-de", "de", func(t string) string { return words(t, func(i int) string { return compound(i, 6) }) }},
		{"distinct-short-words-de", "de", func(t string) string {
			return words(t, func(i int) string { return compound(i, 1)[:2] + fmt.Sprint(i) })
		}},
		{"repeated-word-de", "de", func(t string) string { return fill(t, "Ladekabelschaden", " ") }},
		{"mixed-scripts-de", "de", func(t string) string { return fill(t, "schadenщкодаσχάδηダメージ損害ضرر", "") }},
		{"digit-run-de", "de", func(t string) string { return fill(t, "1234567890", "") }},
		{"umlaut-a-de", "de", func(t string) string { return fill(t, "ä", "") }},
		{"umlaut-a-en", "en", func(t string) string { return fill(t, "ä", "") }},
		// NFKC lengthens U+FDFA eighteen-fold: as many as the normalised limit allows (a
		// fifteenth of the characters the limit allows as received), and fullwidth letters,
		// each normalised to its ASCII letter.
		{"fdfa-to-the-limit-en", "en", func(t string) string { return t + strings.Repeat("\ufdfa", (2000-len(t))/18) }},
		{"fullwidth-words-en", "en", func(t string) string { return fill(t, "\uff44\uff41\uff4d\uff41\uff47\uff45\uff53", " ") }},
		// Synonym terms of several words that go on through fillers, and contractions without
		// apostrophes to mend: the longest walks the synonym matcher makes.
		{"synonym-walks-en", "en", func(t string) string {
			return fill(t, "phone battery is the dead cant get into the car wont open", " ")
		}},
	}
}

// BenchmarkLookupCyclingAsOf is a lookup whose as_of cycles over 25 sets of versions in force
// (testutil.ManyVersionsDir) against the same lookup of today, with the epochs projected from
// the index of every version as a function holds them: "kept" with the default bounds (every
// set kept after the first round), "evicted" with one epoch kept (every lookup projects its
// set), "beside" with one epoch kept and every other lookup one of today's (today's set is kept
// whatever the bound, so only the audit's lookups project). It reports the epochs' own heap at
// the end.
func BenchmarkLookupCyclingAsOf(b *testing.B) {
	dir, days := testutil.ManyVersionsDir(b, 25)
	c, err := knowledge.LoadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	base := lexical.BuildAll(c)
	for _, bench := range []struct {
		name         string
		keep         int
		cycle, today bool
	}{{"today", lexical.DefaultEpochs, false, true}, {"kept", lexical.DefaultEpochs, true, false}, {"evicted", 1, true, false},
		{"beside", 1, true, true}} {
		b.Run(bench.name, func(b *testing.B) {
			epochs := lexical.NewEpochs(c, nil, nil, bench.keep).WithBase(base)
			svc := retrieval.New(nil, demo.WithEpochs(epochs), store.NewMemory(), retrieval.DefaultOptions(),
				slog.New(slog.NewTextHandler(io.Discard, nil))).WithVersions(epochs, time.UTC, 30).
				WithClock(func() time.Time { return time.Date(2027, 6, 1, 12, 0, 0, 0, time.UTC) })
			req := lookup.LookupRequest{Question: "A customer left a phone in the car: what now?", Language: "en", TopK: 5,
				Actor: port.Actor{ID: "bench"}}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				switch {
				case bench.cycle && !bench.today:
					req.AsOf = days[i%len(days)]
				case bench.cycle && i%2 == 0: // beside: every other lookup an audit's
					req.AsOf = days[(i/2)%len(days)]
				default:
					req.AsOf = ""
				}
				i++
				if _, err := svc.Lookup(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(epochs.Bytes())/(1<<20), "epoch-MB")
			b.ReportMetric(float64(epochs.Builds())/float64(b.N), "sets-made/op")
		})
	}
}

// stageClock is a span recorder (span.Steps) that adds up the time of each step of a lookup
// while on.
type stageClock struct {
	on    bool
	total map[string]time.Duration
}

func (c *stageClock) Start(ctx context.Context, name string) (context.Context, func()) {
	start := time.Now()
	return ctx, func() {
		if c.on {
			c.total[name] += time.Since(start)
		}
	}
}

func (c *stageClock) Annotate(context.Context, span.Annotations) {}

// BenchmarkLookupStages asks the questions of the evaluation sets on the embedded corpus and
// reports where a lookup's time goes, the mean per timed lookup of each step the service marks
// (span.Start): l0 (the front-matter match), l1 (the demo provider's BM25 and focus), lexical
// (the evidence paths' rankings), fusion, verdict (the complements, the relevance and the blocks'
// own hit reasons) and trace_write; analysis-and-rest is the lookup's time outside them (the
// question's analysis first). in-turn asks each question once, the next one another; repeated
// asks each five times in a row and times the last four, so that the two show which steps
// changing questions slow (BenchmarkLookupInTurn).
func BenchmarkLookupStages(b *testing.B) {
	qs, err := eval.LoadDir("../../eval")
	if err != nil {
		b.Fatal(err)
	}
	for _, bench := range []struct {
		name    string
		repeats int
	}{{"in-turn", 1}, {"repeated", 5}} {
		b.Run(bench.name, func(b *testing.B) {
			ix := index(b)
			svc := retrieval.New(ix, demo.New(ix), store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.NewTextHandler(io.Discard, nil)))
			clock := &stageClock{total: map[string]time.Duration{}}
			ctx := span.With(context.Background(), clock)
			var all time.Duration
			n, i := 0, 0
			for b.Loop() {
				q := qs[(i/bench.repeats)%len(qs)]
				clock.on = bench.repeats == 1 || i%bench.repeats != 0
				i++
				start := time.Now()
				if _, err := svc.Lookup(ctx, lookup.LookupRequest{Question: q.Question, Language: q.Language, TopK: 5, Actor: port.Actor{ID: "bench"}}); err != nil {
					b.Fatal(err)
				}
				if clock.on {
					all += time.Since(start)
					n++
				}
			}
			n = max(n, 1)
			rest := all
			for _, name := range []string{"l0", "l1", "lexical", "fusion", "verdict", "trace_write"} {
				rest -= clock.total[name]
				b.ReportMetric(float64(clock.total[name].Nanoseconds())/float64(n), name+"-ns/op")
			}
			b.ReportMetric(float64(rest.Nanoseconds())/float64(n), "analysis-and-rest-ns/op")
		})
	}
}

// BenchmarkLookupInTurn asks the questions of the evaluation sets on the embedded corpus in
// three orders and reports the mean time of a lookup (lookup-ns, each timed on its own):
// in-turn, each question once, the next one another; repeated, each question five times in a
// row, the last four timed; repeated-flushed, the same with 8 MB of memory read before each
// timed lookup, several times what a core's own caches hold (the memory is written first: pages
// never written all read the one zero page, which evicts nothing). What in-turn costs above
// repeated is what changing questions cost; what repeated-flushed costs above repeated, the part
// of it the core's caches explain (BENCHMARKS.md, "What bounds each figure").
func BenchmarkLookupInTurn(b *testing.B) {
	qs, err := eval.LoadDir("../../eval")
	if err != nil {
		b.Fatal(err)
	}
	flush := make([]byte, 8<<20)
	for k := range flush {
		flush[k] = byte(k)
	}
	var sink byte
	for _, bench := range []struct {
		name    string
		repeats int
		flushed bool
	}{{"in-turn", 1, false}, {"repeated", 5, false}, {"repeated-flushed", 5, true}} {
		b.Run(bench.name, func(b *testing.B) {
			ix := index(b)
			svc := retrieval.New(ix, demo.New(ix), store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.NewTextHandler(io.Discard, nil)))
			var timed time.Duration
			n, i := 0, 0
			for b.Loop() {
				q := qs[(i/bench.repeats)%len(qs)]
				first := i%bench.repeats == 0
				i++
				if bench.flushed {
					for k := 0; k < len(flush); k += 64 {
						sink += flush[k]
					}
				}
				start := time.Now()
				if _, err := svc.Lookup(context.Background(), lookup.LookupRequest{Question: q.Question, Language: q.Language, TopK: 5, Actor: port.Actor{ID: "bench"}}); err != nil {
					b.Fatal(err)
				}
				if bench.repeats == 1 || !first {
					timed += time.Since(start)
					n++
				}
			}
			b.ReportMetric(float64(timed.Nanoseconds())/float64(max(n, 1)), "lookup-ns")
		})
	}
	_ = sink
}
