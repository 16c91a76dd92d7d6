package lexical_test

import (
	"runtime"
	"sync"
	"testing"
	"weak"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
)

func TestEpochsKeepABoundedNumberOfSets(t *testing.T) {
	c, _ := testutil.LoadVersioned(t)
	e := lexical.NewEpochs(c, nil, nil, 2)
	days := []string{"2026-12-31", "2027-01-02", "2027-01-12", "2027-03-01"} // four sets in force
	for _, d := range days {
		ep := e.At(d)
		if ep.Since > d || ep.Index.Lang("en") == nil {
			t.Fatalf("%s: epoch of the set in force since %q", d, ep.Since)
		}
		if got := ep.Corpus.Document("en", "access-failure").Version; got != c.InForce("en", "access-failure", d).Version {
			t.Errorf("%s: access-failure %s", d, got)
		}
	}
	if n := e.Builds(); n != 4 {
		t.Errorf("%d builds for four sets, want 4", n)
	}
	e.At("2027-03-02") // the last set, kept
	e.At("2027-01-13") // the third, kept
	if n := e.Builds(); n != 4 {
		t.Errorf("%d builds after asking for kept sets, want 4", n)
	}
	e.At("2026-12-30") // the first, dropped as only two are kept
	if n := e.Builds(); n != 5 {
		t.Errorf("%d builds after asking for a dropped set, want 5", n)
	}
}

// TestEpochsStayBoundedWhateverDaysAreAsked cycles as_of over many sets in force and every day
// between them: the epochs kept never exceed the bound, a day maps onto its set's one entry (two
// days of one set make one epoch), and an evicted epoch's index is unreachable (collected), so
// that memory does not grow with the days asked.
func TestEpochsStayBoundedWhateverDaysAreAsked(t *testing.T) {
	dir, days := testutil.ManyVersionsDir(t, 20)
	c, err := knowledge.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	const keep = 3
	e := lexical.NewEpochs(c, nil, nil, keep)
	first := e.At(days[0])
	gone := weak.Make(first.Index.Lang("en"))
	first = nil
	for round := range 2 {
		for _, d := range days {
			for _, day := range []string{d, d} { // the same set twice: one entry
				if ep := e.At(day); ep.Since != d {
					t.Fatalf("round %d: %s served the set since %s", round, day, ep.Since)
				}
			}
			if n := e.Kept(); n > keep {
				t.Fatalf("%d epochs kept, bound %d", n, keep)
			}
		}
	}
	if n := e.Builds(); n != int64(2*len(days)) {
		t.Errorf("%d sets made for %d distinct sets cycled twice through a cache of %d, want %d", n, len(days), keep, 2*len(days))
	}
	runtime.GC()
	runtime.GC()
	if gone.Value() != nil {
		t.Error("an evicted epoch's index is still reachable")
	}
	runtime.KeepAlive(e)
}

// TestEpochsAnalyseADayOnce: lookups of one uncached day at once share one analysis, and every
// one of them gets it.
func TestEpochsAnalyseADayOnce(t *testing.T) {
	c, _ := testutil.LoadVersioned(t)
	e := lexical.NewEpochs(c, nil, nil, lexical.DefaultEpochs)
	var wg sync.WaitGroup
	got := make([]*lexical.Epoch, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = e.At("2027-01-02")
		}()
	}
	wg.Wait()
	if n := e.Builds(); n != 1 {
		t.Errorf("%d analyses for one day asked 16 times at once, want 1", n)
	}
	for i, ep := range got {
		if ep == nil || ep != got[0] {
			t.Fatalf("lookup %d got epoch %p, the first %p", i, ep, got[0])
		}
	}
}

func TestEpochsReuseTheIndexGivenForItsSet(t *testing.T) {
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	ix := lexical.Build(c)
	e := lexical.NewEpochs(c, c, ix, lexical.DefaultEpochs)
	if e.At("2026-12-04").Index != ix || e.Builds() != 0 {
		t.Error("the index given for today's set was analysed again")
	}
	if e.At("2026-01-01").Index == ix || e.Builds() != 1 {
		t.Error("a day before the corpus's effective dates was served from the index of another set")
	}
}

// BenchmarkEpochBuild is what the first lookup of a new set of versions in force costs: the
// embedded corpus's 22 files analysed.
func BenchmarkEpochBuild(b *testing.B) {
	c, err := knowledge.Embedded()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		e := lexical.NewEpochs(c, nil, nil, 1)
		e.At("2026-12-04")
	}
}

// BenchmarkEpochProject is what the first lookup of a set of versions in force not kept costs
// with the index of every version (Epochs.WithBase): the versioned test corpus's index of 26
// files a language projected onto a day's 11 procedures, no text analysed.
func BenchmarkEpochProject(b *testing.B) {
	c, _ := testutil.LoadVersioned(b)
	all := lexical.BuildAll(c)
	on := c.On(testutil.SwitchDay)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := all.Project(on); !ok {
			b.Fatal("not projected")
		}
	}
}

// BenchmarkEpochsAtKept is what every lookup pays to find its day's set in force when it is kept:
// a binary search over the effective dates, no listing of the corpus's versions.
func BenchmarkEpochsAtKept(b *testing.B) {
	c, err := knowledge.Embedded()
	if err != nil {
		b.Fatal(err)
	}
	e := lexical.NewEpochs(c, c, lexical.Build(c), lexical.DefaultEpochs)
	e.At("2026-12-04")
	b.ReportAllocs()
	for b.Loop() {
		e.At("2026-12-04")
	}
}

// TestEpochsStayWithinTheirByteBound: projected from the index of every version, the epochs kept
// hold at most the byte bound of their own (the latest whatever its size), however many sets
// are cycled, and each is what the day asks for.
func TestEpochsStayWithinTheirByteBound(t *testing.T) {
	dir, days := testutil.ManyVersionsDir(t, 25)
	c, err := knowledge.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	one := lexical.NewEpochs(c, nil, nil, 1).WithBase(lexical.BuildAll(c))
	one.At(days[0])
	size := one.Bytes()
	if size <= 0 {
		t.Fatal("a projected epoch counts no bytes")
	}
	bound := 3*size + size/2 // room for three
	e := lexical.NewEpochs(c, nil, nil, lexical.DefaultEpochs).WithBase(lexical.BuildAll(c)).WithByteBound(bound)
	for range 2 {
		for _, d := range days {
			ep := e.At(d)
			if got := ep.Corpus.Document("en", "lost-and-found").EffectiveDate; got != d {
				t.Fatalf("%s: lost-and-found of %s in force", d, got)
			}
			if b := e.Bytes(); b > bound || e.Kept() > 3 {
				t.Fatalf("%d epochs, %d bytes kept, bound %d", e.Kept(), b, bound)
			}
		}
	}
}

// TestTodaysSetOutlivesAnAudit: with room for one set besides today's, an audit cycling as_of
// over every other set never evicts today's, which stays the one epoch served for today (no
// projection again) while the others are made and dropped in turn; once another day is today,
// the former today's set is evicted like any other.
func TestTodaysSetOutlivesAnAudit(t *testing.T) {
	dir, days := testutil.ManyVersionsDir(t, 8)
	c, err := knowledge.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	all := lexical.BuildAll(c)
	one := lexical.NewEpochs(c, nil, nil, 1).WithBase(all)
	one.At(days[0])
	size := one.Bytes()
	e := lexical.NewEpochs(c, nil, nil, lexical.DefaultEpochs).WithBase(all).WithByteBound(size + size/2)
	today := e.Today(days[0])
	for round := range 2 {
		for _, d := range days[1:] {
			if ep := e.At(d); ep.Since != d {
				t.Fatalf("round %d: %s served the set since %s", round, d, ep.Since)
			}
			made := e.Builds()
			if e.Today(days[0]) != today || e.Builds() != made {
				t.Fatalf("round %d: after the audit of %s, today's set was made again", round, d)
			}
			if n := e.Kept(); n > 2 {
				t.Fatalf("round %d: %d epochs kept with room for one besides today's", round, n)
			}
		}
	}
	if n, want := e.Builds(), int64(1+2*(len(days)-1)); n != want {
		t.Errorf("%d sets made, want %d: today's once, every other set once per round", n, want)
	}
	e.Today(days[1]) // midnight: another set in force
	for _, d := range days[2:] {
		e.At(d)
	}
	made := e.Builds()
	if e.At(days[0]); e.Builds() != made+1 {
		t.Error("the set of the day before was kept as today's after the day changed")
	}
}
