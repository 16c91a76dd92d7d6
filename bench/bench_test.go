package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/bench/gen"
	"github.com/northstar-mobility/mobilityops-knowledge/bench/systems"
	"github.com/northstar-mobility/mobilityops-knowledge/eval"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

// evalDir is the root module's evaluation sets, from this module's folder.
const evalDir = "../eval"

// fixture is one generated corpus and the systems built over it, shared by every benchmark and
// test of a process for that size.
type fixture struct {
	corpus  *knowledge.Corpus
	stats   gen.Stats
	project *systems.Project
	lexical *systems.Lexical
	bleve   *systems.Bleve
}

var (
	fixturesMu sync.Mutex
	fixtures   = map[int]*fixture{}
	tempDirs   []string
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, f := range fixtures {
		f.bleve.Close()
	}
	for _, d := range tempDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// setup generates a corpus of n procedures, loads it with knowledge.LoadDir and builds the three
// systems over it, once per process.
func setup(tb testing.TB, n int) *fixture {
	tb.Helper()
	fixturesMu.Lock()
	defer fixturesMu.Unlock()
	if f := fixtures[n]; f != nil {
		return f
	}
	dir, err := os.MkdirTemp("", "bench-corpus-")
	if err != nil {
		tb.Fatal(err)
	}
	tempDirs = append(tempDirs, dir)
	st, err := gen.Write(filepath.Join(dir, "corpus"), n, gen.DefaultSeed)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := knowledge.LoadDir(filepath.Join(dir, "corpus"))
	if err != nil {
		tb.Fatal(err)
	}
	p := systems.NewProject(c)
	b, err := systems.NewBleve(c, filepath.Join(dir, "bleve"))
	if err != nil {
		tb.Fatal(err)
	}
	f := &fixture{corpus: c, stats: st, project: p, lexical: systems.NewLexical(p.Index), bleve: b}
	fixtures[n] = f
	return f
}

var questions = sync.OnceValues(func() ([]eval.Question, error) { return eval.LoadDir(evalDir) })

// TestGeneratorVocabularyGrows checks that a larger corpus has new words, not only copies: the
// distinct words of 220 procedures are at least twice those of the 22 embedded ones, in each
// language, and its distractors bring new categories.
func TestGeneratorVocabularyGrows(t *testing.T) {
	small, large := setup(t, 22), setup(t, 220)
	for _, lang := range knowledge.Languages {
		s, l := distinct(small.corpus, lang), distinct(large.corpus, lang)
		if l < 2*s {
			t.Errorf("%s: %d distinct words at 220 procedures, %d at 22: want at least twice as many", lang, l, s)
		}
		if n := len(large.corpus.Documents(lang)); n != 110 {
			t.Errorf("%s: %d procedures at 220, want 110", lang, n)
		}
	}
	if large.stats.Categories <= small.stats.Categories {
		t.Errorf("%d categories at 220 procedures, %d at 22: want more", large.stats.Categories, small.stats.Categories)
	}
}

// distinct counts the distinct lower-cased words of a language's sections.
func distinct(c *knowledge.Corpus, lang string) int {
	seen := map[string]bool{}
	for _, d := range c.Documents(lang) {
		for _, s := range d.Sections {
			for _, w := range strings.FieldsFunc(strings.ToLower(s.Heading+" "+s.Content), func(r rune) bool {
				return !('a' <= r && r <= 'z' || r >= 0xC0)
			}) {
				seen[w] = true
			}
		}
	}
	return len(seen)
}

// TestSystemsFindTheExpectedProcedure asks a few evaluation questions, worded after their
// procedures, of every system on the embedded corpus and on one with ten times as many
// procedures: each puts the expected procedure first.
func TestSystemsFindTheExpectedProcedure(t *testing.T) {
	qs, err := questions()
	if err != nil {
		t.Fatal(err)
	}
	pick := map[string]bool{"en-08": true, "en-11": true, "de-08": true, "de-13": true}
	var asked []eval.Question
	for _, q := range qs {
		if pick[q.ID] {
			asked = append(asked, q)
			delete(pick, q.ID) // ids repeat across sets: the first (dev.yaml) only
		}
	}
	if len(asked) != 4 {
		t.Fatalf("found %d of the 4 questions", len(asked))
	}
	for _, n := range []int{22, 220} {
		f := setup(t, n)
		for _, s := range []systems.System{f.project, f.lexical, f.bleve} {
			for _, q := range asked {
				a, err := s.Ask(context.Background(), q.Language, q.Question)
				if err != nil {
					t.Fatal(err)
				}
				if a.Primary != q.Expect {
					t.Errorf("%d procedures, %s, %s %q: primary %q, want %q (results %v)", n, s.Name(), q.ID, q.Question, a.Primary, q.Expect, a.IDs)
				}
			}
		}
	}
}

// benchSizes are the corpus sizes of the benchmarks: 22 and 2,200 procedures, 22 alone with
// -short, or the sizes of BENCH_SIZES (such as BENCH_SIZES=22,2200,10000).
func benchSizes(b *testing.B) []int {
	if env := os.Getenv("BENCH_SIZES"); env != "" {
		var out []int
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("BENCH_SIZES: %v", err)
			}
			out = append(out, n)
		}
		return out
	}
	if testing.Short() {
		return []int{22}
	}
	return []int{22, 2200}
}

// benchmark times one question per iteration, the next of every evaluation question in turn,
// on the system chosen from the size's fixture.
func benchmark(b *testing.B, system func(*fixture) systems.System) {
	qs, err := questions()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range benchSizes(b) {
		b.Run(fmt.Sprintf("size=%d", n), func(b *testing.B) {
			s := system(setup(b, n))
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				q := qs[i%len(qs)]
				i++
				if _, err := s.Ask(ctx, q.Language, q.Question); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLookup is one lookup through the service, as POST /lookup runs it.
func BenchmarkLookup(b *testing.B) {
	benchmark(b, func(f *fixture) systems.System { return f.project })
}

// BenchmarkLexical is the project's BM25 search alone on the question's terms.
func BenchmarkLexical(b *testing.B) {
	benchmark(b, func(f *fixture) systems.System { return f.lexical })
}

// BenchmarkBleve is one bleve match query for the best five passages.
func BenchmarkBleve(b *testing.B) {
	benchmark(b, func(f *fixture) systems.System { return f.bleve })
}

// BenchmarkLookupFirstPass asks every question once of a lookup service built fresh for each
// pass, as a new function instance meets its first questions: the first time a passage is
// returned, Focus analyses its sentences and judges the kinds of fact they state. It reports
// the pass's time per question; the build is not timed.
func BenchmarkLookupFirstPass(b *testing.B) {
	qs, err := questions()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range benchSizes(b) {
		b.Run(fmt.Sprintf("size=%d", n), func(b *testing.B) {
			f := setup(b, n)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				p := systems.NewProject(f.corpus)
				b.StartTimer()
				for _, q := range qs {
					if _, err := p.Ask(ctx, q.Language, q.Question); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(qs)), "ns/question")
		})
	}
}
