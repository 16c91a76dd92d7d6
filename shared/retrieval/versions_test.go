package retrieval_test

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

var berlin = func() *time.Location {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	return loc
}()

// versioned is a lookup service over the versioned test corpus (testutil.VersionedDir), its
// clock at now, announcing versions coming within upcoming days.
type versioned struct {
	svc    *retrieval.Service
	p      *provider
	traces *store.Memory
	epochs *lexical.Epochs
}

func newVersioned(t *testing.T, now time.Time, upcoming int) *versioned {
	t.Helper()
	c, _ := testutil.LoadVersioned(t)
	epochs := lexical.NewEpochs(c, nil, nil, lexical.DefaultEpochs)
	p := &provider{Provider: demo.WithEpochs(epochs)}
	traces := store.NewMemory()
	svc := retrieval.New(nil, p, traces, retrieval.DefaultOptions(), slog.New(slog.NewTextHandler(io.Discard, nil))).
		WithVersions(epochs, berlin, upcoming).WithClock(func() time.Time { return now })
	return &versioned{svc: svc, p: p, traces: traces, epochs: epochs}
}

func (v *versioned) lookup(t *testing.T, lang, question, asOf string) lookup.Result {
	t.Helper()
	res, err := v.svc.Lookup(context.Background(), lookup.LookupRequest{Question: question, Language: lang, TopK: 5,
		AsOf: asOf, Actor: port.Actor{ID: "agent-7", Scopes: []string{"knowledge:read"}}, CorrelationID: "corr-v"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// berlinTime is a wall-clock time in Berlin.
func berlinTime(day string, hour, minute int) time.Time {
	d, err := time.ParseInLocation(time.DateOnly, day, berlin)
	if err != nil {
		panic(err)
	}
	return d.Add(time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute)
}

var unlockQuestions = map[string]string{
	"en": "How many remote unlock attempts may I send when the digital key fails?",
	"de": "Wie viele Versuche der Fernentriegelung sind erlaubt, wenn der digitale Schlüssel nicht öffnet?",
}

// accessVersions are the versions of access-failure among the blocks, and whether a block quotes
// the attempts of version 1.4 ("3") or of 1.5 ("5").
func accessVersions(t *testing.T, res lookup.Result) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for _, b := range res.EvidenceBlocks {
		if b.DocumentID != "access-failure" {
			continue
		}
		seen[b.Version] = true
		if strings.Contains(b.Content, "5 attempts") || strings.Contains(b.Content, "5 Versuche") {
			seen["quotes 5"] = true
		}
		if strings.Contains(b.Content, "3 attempts") || strings.Contains(b.Content, "3 Versuche") {
			seen["quotes 3"] = true
		}
	}
	return seen
}

func TestLookupQuotesTheVersionInForce(t *testing.T) {
	// The version took effect yesterday; as_of before it asks for the old one.
	v := newVersioned(t, berlinTime("2027-01-02", 10, 0), 30)
	for _, lang := range knowledge.Languages {
		res := v.lookup(t, lang, unlockQuestions[lang], "")
		got := accessVersions(t, res)
		if !got["1.5"] || got["1.4"] || !got["quotes 5"] || got["quotes 3"] {
			t.Errorf("%s today: access-failure blocks %v, want 1.5 only, quoting 5 attempts", lang, got)
		}
		if res.AsOf != "2027-01-02" {
			t.Errorf("%s: as_of %q, want today 2027-01-02", lang, res.AsOf)
		}
		for _, b := range res.EvidenceBlocks {
			if b.DocumentID == "access-failure" && !strings.Contains(b.Source, "access-failure@1.5.md#") {
				t.Errorf("%s: source %s is not the file of version 1.5", lang, b.Source)
			}
		}
		old := v.lookup(t, lang, unlockQuestions[lang], "2026-12-31")
		got = accessVersions(t, old)
		if !got["1.4"] || got["1.5"] || !got["quotes 3"] || got["quotes 5"] {
			t.Errorf("%s as_of 2026-12-31: access-failure blocks %v, want 1.4 only, quoting 3 attempts", lang, got)
		}
		if old.AsOf != "2026-12-31" {
			t.Errorf("%s: as_of %q not echoed", lang, old.AsOf)
		}
	}
}

func TestTheDayBeginsAtMidnightInBerlin(t *testing.T) {
	for _, tc := range []struct {
		now  time.Time
		want string
	}{
		{berlinTime("2026-12-31", 23, 30), "1.4"},
		{berlinTime("2027-01-01", 0, 30), "1.5"},
	} {
		v := newVersioned(t, tc.now, 30)
		got := accessVersions(t, v.lookup(t, "en", unlockQuestions["en"], ""))
		if !got[tc.want] || len(got) == 0 {
			t.Errorf("at %s (UTC %s): access-failure versions %v, want %s", tc.now.In(berlin).Format(time.DateTime),
				tc.now.UTC().Format(time.DateTime), got, tc.want)
		}
		for ver := range got {
			if (ver == "1.4" || ver == "1.5") && ver != tc.want {
				t.Errorf("at %s: version %s served too", tc.now.In(berlin).Format(time.DateTime), ver)
			}
		}
	}
}

var damageQuestions = map[string]string{
	"en": damageQuestion,
	"de": "Am Fahrzeug ist ein tiefer Kratzer und eine Delle an der Hecktür, wie melde ich den Schaden?",
}

func TestNextVersionIsAnnouncedWithinTheWindow(t *testing.T) {
	for _, tc := range []struct {
		name     string
		upcoming int
		asOf     string
		want     *lookup.NextVersion
		version  string
	}{
		{"ten days ahead, window 30", 30, "", &lookup.NextVersion{Version: "1.4", EffectiveDate: testutil.ComingDay}, "1.3"},
		{"ten days ahead, window 10", 10, "", &lookup.NextVersion{Version: "1.4", EffectiveDate: testutil.ComingDay}, "1.3"},
		{"ten days ahead, window 9", 9, "", nil, "1.3"},
		{"on its day", 30, testutil.ComingDay, nil, "1.4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newVersioned(t, berlinTime("2027-01-02", 9, 0), tc.upcoming)
			for _, lang := range knowledge.Languages {
				res := v.lookup(t, lang, damageQuestions[lang], tc.asOf)
				n := 0
				for _, b := range res.EvidenceBlocks {
					if b.DocumentID != "damage-procedure" {
						if b.NextVersion != nil && b.DocumentID != "access-failure" {
							t.Errorf("%s: %s announces %v", lang, b.DocumentID, b.NextVersion)
						}
						continue
					}
					n++
					if b.Version != tc.version {
						t.Errorf("%s: damage-procedure %s served, want %s", lang, b.Version, tc.version)
					}
					if (b.NextVersion == nil) != (tc.want == nil) || (b.NextVersion != nil && *b.NextVersion != *tc.want) {
						t.Errorf("%s: next_version %+v, want %+v", lang, b.NextVersion, tc.want)
					}
				}
				if n == 0 {
					t.Fatalf("%s: no damage-procedure block", lang)
				}
			}
		})
	}
}

func TestAProcedureWhoseVersionsLieAheadAnswersNothing(t *testing.T) {
	v := newVersioned(t, berlinTime("2027-01-02", 9, 0), 30)
	questions := map[string]string{
		"en": "How do I clean the vehicle interior and disinfect the steering wheel?",
		"de": "Wie reinige ich den Innenraum und desinfiziere das Lenkrad?",
	}
	for _, lang := range knowledge.Languages {
		for _, asOf := range []string{"", testutil.AheadDay} {
			res := v.lookup(t, lang, questions[lang], asOf)
			found := false
			for _, b := range res.EvidenceBlocks {
				if b.DocumentID == testutil.AheadID {
					found = true
				}
			}
			if want := asOf == testutil.AheadDay; found != want {
				t.Errorf("%s as_of %q: %s among the blocks %v, want %v", lang, asOf, testutil.AheadID, found, want)
			}
		}
	}
}

// Coming versions change no ranking: on a day when the versions in force are the embedded
// files, every block and score is the one the embedded corpus's own index gives.
func TestComingVersionsLeaveTodaysStatisticsAlone(t *testing.T) {
	v := newVersioned(t, berlinTime("2026-12-31", 12, 0), 30)
	f := newFixture(t)
	for _, lang := range knowledge.Languages {
		for _, q := range []string{unlockQuestions[lang], damageQuestions[lang]} {
			got, want := v.lookup(t, lang, q, ""), f.lookup(t, lang, q)
			if len(got.EvidenceBlocks) != len(want.EvidenceBlocks) {
				t.Fatalf("%s %q: %d blocks, want %d", lang, q, len(got.EvidenceBlocks), len(want.EvidenceBlocks))
			}
			for i := range got.EvidenceBlocks {
				g, w := got.EvidenceBlocks[i], want.EvidenceBlocks[i]
				if g.Source != w.Source || g.Score != w.Score {
					t.Errorf("%s %q block %d: %s %v, want %s %v", lang, q, i, g.Source, g.Score, w.Source, w.Score)
				}
			}
		}
	}
}

// A semantic provider still serving access-failure 1.4 after 1.5 took effect: its candidates
// are outdated, after the evidence, and ground nothing.
func TestOutdatedCandidatesNeverGround(t *testing.T) {
	v := newVersioned(t, berlinTime("2027-01-02", 9, 0), 30)
	c := v.epochs.Corpus()
	old := c.Versions("en", "access-failure")[0]
	sec := old.Sections[2]
	v.p.semantic = true
	v.p.cands = func(q port.Query) []port.Candidate {
		return []port.Candidate{{DocumentID: old.ID, Version: old.Version, Title: old.Title, Section: sec.Heading,
			Anchor: sec.Anchor, Category: old.Category, Source: knowledge.SectionSource("procedures/en/access-failure.md", sec.Anchor),
			Content: sec.Content, Score: 0.95, Rank: 1}}
	}
	res := v.lookup(t, "en", unlockQuestions["en"], "")
	if res.EvidenceState == "grounded" || res.Relevance.SemanticSupport {
		t.Errorf("state %s, semantic support %v from an outdated candidate", res.EvidenceState, res.Relevance.SemanticSupport)
	}
	if res.Primary != nil && res.Primary.Outdated {
		t.Error("an outdated block is primary")
	}
	for _, b := range res.Supplement {
		if b.Outdated {
			t.Error("an outdated block is in the supplement")
		}
	}
	last := res.EvidenceBlocks[len(res.EvidenceBlocks)-1]
	if !last.Outdated || last.Version != "1.4" || last.EffectiveDate != old.EffectiveDate {
		t.Errorf("last block %+v, want the outdated 1.4 candidate", last)
	}
	if res.Retrieval.L1.OutdatedCount != 1 || res.Retrieval.L1.CandidateCount != 0 {
		t.Errorf("l1 %+v, want one outdated candidate and none counted", res.Retrieval.L1)
	}
	tr, err := v.traces.GetTrace(context.Background(), res.InvocationID)
	if err != nil {
		t.Fatal(err)
	}
	d := tr.RetrievalDetails
	if d.AsOf != "2027-01-02" || d.AsOfRequested {
		t.Errorf("trace as_of %q requested %v", d.AsOf, d.AsOfRequested)
	}
	sums := d.EvidenceSummaries
	if s := sums[len(sums)-1]; !s.Outdated || s.Version != "1.4" {
		t.Errorf("trace's last summary %+v, want the outdated 1.4", s)
	}

	// The same candidate on a day 1.4 is in force is evidence like any other.
	res = v.lookup(t, "en", unlockQuestions["en"], "2026-12-31")
	for _, b := range res.EvidenceBlocks {
		if b.Outdated {
			t.Errorf("as_of 2026-12-31: %s %s outdated", b.DocumentID, b.Version)
		}
	}
	if !res.Relevance.SemanticSupport {
		t.Error("as_of 2026-12-31: the candidate of the version in force gives no semantic support")
	}
}

func TestEpochsAreAnalysedOncePerSetInForce(t *testing.T) {
	v := newVersioned(t, berlinTime("2027-01-02", 9, 0), 30)
	for _, asOf := range []string{"", "2027-01-03", "2027-01-11", "2026-12-31", "2026-06-01", ""} {
		v.lookup(t, "en", unlockQuestions["en"], asOf)
	}
	// 2027-01-02..11 share a set, 2026-06-01 and 2026-12-31 another.
	if n := v.epochs.Builds(); n != 2 {
		t.Errorf("%d epochs analysed, want 2", n)
	}
}

// TestCyclingAsOfKeepsMemoryBounded cycles lookups' as_of over more sets in force than are kept:
// the epochs kept stay within their bound, and an evicted set's index, with the hit-reason texts
// the service derived from it, is unreachable afterwards (collected), so that memory does not
// grow with the number of distinct days asked.
func TestCyclingAsOfKeepsMemoryBounded(t *testing.T) {
	dir, days := testutil.ManyVersionsDir(t, 12)
	c, err := knowledge.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	const keep = 4
	epochs := lexical.NewEpochs(c, nil, nil, keep)
	svc := retrieval.New(nil, &provider{Provider: demo.WithEpochs(epochs)}, store.NewMemory(), retrieval.DefaultOptions(),
		slog.New(slog.NewTextHandler(io.Discard, nil))).WithVersions(epochs, berlin, 30).
		WithClock(func() time.Time { return berlinTime("2027-01-02", 9, 0) })
	ask := func(asOf string) {
		t.Helper()
		res, err := svc.Lookup(context.Background(), lookup.LookupRequest{Question: "A customer left a phone in the car: what now?",
			Language: "en", TopK: 5, AsOf: asOf, Actor: port.Actor{ID: "agent-7", Scopes: []string{"knowledge:read"}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.EvidenceBlocks) == 0 {
			t.Fatalf("as_of %s: no evidence", asOf)
		}
	}
	ask(days[0])
	first := weak.Make(epochs.At(days[0]).Index.Lang("en"))
	for range 3 {
		for _, d := range days {
			ask(d)
			if n := epochs.Kept(); n > keep {
				t.Fatalf("%d epochs kept, bound %d", n, keep)
			}
		}
	}
	runtime.GC()
	runtime.GC()
	if first.Value() != nil {
		t.Error("the index of an evicted set is still reachable after cycling as_of (the service keeps it)")
	}
	runtime.KeepAlive(svc)
}

// TestAnAuditLeavesTodaysSetInPlace: with room for one set besides today's, lookups cycling
// as_of over every other set in force never make the lookups without a date wait for their set
// again: the service keeps today's set as today's (lexical.Epochs.Today), the day's after
// midnight as well as the one it started on.
func TestAnAuditLeavesTodaysSetInPlace(t *testing.T) {
	dir, days := testutil.ManyVersionsDir(t, 6)
	c, err := knowledge.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	epochs := lexical.NewEpochs(c, nil, nil, lexical.DefaultEpochs).WithBase(lexical.BuildAll(c)).WithByteBound(1)
	var now atomic.Value
	now.Store(berlinTime("2027-01-02", 9, 0))
	v := &versioned{epochs: epochs, traces: store.NewMemory(), p: &provider{Provider: demo.WithEpochs(epochs)}}
	v.svc = retrieval.New(nil, v.p, v.traces, retrieval.DefaultOptions(), slog.New(slog.NewTextHandler(io.Discard, nil))).
		WithVersions(epochs, berlin, 30).WithClock(func() time.Time { return now.Load().(time.Time) })
	const q = "A customer left a phone in the car: what now?"
	now.Store(berlinTime(days[0], 9, 0)) // after midnight: another set in force than at the start
	v.lookup(t, "en", q, "")
	for _, d := range days[1:] {
		v.lookup(t, "en", q, d)
		made := epochs.Builds()
		v.lookup(t, "en", q, "")
		if n := epochs.Builds(); n != made {
			t.Fatalf("after an audit of %s, a lookup of today made %d set(s) again", d, n-made)
		}
	}
}

// An answer's sources announce a coming version as a lookup's blocks do: /ask and ask_knowledge
// carry next_version on each source of a procedure whose next version takes effect within the
// window, and none on the day it is in force.
func TestAskSourcesAnnounceTheNextVersion(t *testing.T) {
	v := newVersioned(t, berlinTime("2027-01-02", 9, 0), 30)
	for _, lang := range knowledge.Languages {
		for _, tc := range []struct {
			asOf string
			want *lookup.NextVersion
		}{
			{"", &lookup.NextVersion{Version: "1.4", EffectiveDate: testutil.ComingDay}},
			{testutil.ComingDay, nil},
		} {
			ans, err := v.svc.Ask(context.Background(), lookup.AskRequest{Question: damageQuestions[lang], Language: lang,
				AsOf: tc.asOf, Actor: port.Actor{ID: "agent-7", Scopes: []string{"knowledge:read"}}, CorrelationID: "corr-a"})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, s := range ans.Sources {
				if s.DocumentID != "damage-procedure" {
					continue
				}
				n++
				if (s.NextVersion == nil) != (tc.want == nil) || (s.NextVersion != nil && *s.NextVersion != *tc.want) {
					t.Errorf("%s as_of %q: source next_version %+v, want %+v", lang, tc.asOf, s.NextVersion, tc.want)
				}
			}
			if n == 0 {
				t.Fatalf("%s as_of %q: no damage-procedure source: %+v", lang, tc.asOf, ans.Sources)
			}
		}
	}
}

// The switch of today's versions in force at midnight in Berlin is logged once, naming the day,
// the zone and the versions switched; lookups of an as_of never log one.
func TestTheSwitchAtMidnightIsLoggedOnce(t *testing.T) {
	c, _ := testutil.LoadVersioned(t)
	epochs := lexical.NewEpochs(c, nil, nil, lexical.DefaultEpochs)
	var logs testutil.SyncBuffer
	clock := berlinTime("2026-12-31", 23, 30)
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	svc := retrieval.New(nil, &provider{Provider: demo.WithEpochs(epochs)}, store.NewMemory(), retrieval.DefaultOptions(),
		slog.New(slog.NewJSONHandler(&logs, nil))).WithVersions(epochs, berlin, 30).WithClock(now)
	ask := func(asOf string) {
		t.Helper()
		if _, err := svc.Lookup(context.Background(), lookup.LookupRequest{Question: unlockQuestions["en"], Language: "en", TopK: 5,
			AsOf: asOf, Actor: port.Actor{ID: "agent-7", Scopes: []string{"knowledge:read"}}}); err != nil {
			t.Fatal(err)
		}
	}
	ask("")
	ask(testutil.ComingDay) // an audit of another set is no switch
	mu.Lock()
	clock = berlinTime(testutil.SwitchDay, 0, 30)
	mu.Unlock()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); ask("") }()
	}
	wg.Wait()
	ask("")
	out := logs.String()
	if n := strings.Count(out, `"msg":"versions in force switched"`); n != 1 {
		t.Fatalf("the switch logged %d times, want once:\n%s", n, out)
	}
	for _, want := range []string{`"day":"` + testutil.SwitchDay + `"`, `"time_zone":"Europe/Berlin"`, `access-failure 1.4 -> 1.5`} {
		if !strings.Contains(out, want) {
			t.Errorf("the switch line lacks %s:\n%s", want, out)
		}
	}
}

// An as_of before the first version on file of every procedure answers unavailable, and says
// which day has no procedure in force.
func TestAsOfBeforeEveryVersionSaysSo(t *testing.T) {
	v := newVersioned(t, berlinTime("2027-01-02", 9, 0), 30)
	for _, lang := range knowledge.Languages {
		res := v.lookup(t, lang, unlockQuestions[lang], "2001-01-01")
		if res.EvidenceState != port.StateUnavailable || !strings.Contains(res.Relevance.Reason, "2001-01-01") || res.Primary != nil {
			t.Errorf("%s: %s, reason %q", lang, res.EvidenceState, res.Relevance.Reason)
		}
		ans, err := v.svc.Ask(context.Background(), lookup.AskRequest{Question: unlockQuestions[lang], Language: lang, AsOf: "2001-01-01",
			Actor: port.Actor{ID: "agent-7", Scopes: []string{"knowledge:read"}}})
		if err != nil || ans.EvidenceState != port.StateUnavailable || !strings.Contains(ans.Answer, "2001-01-01") {
			t.Errorf("%s ask: %s %q %v", lang, ans.EvidenceState, ans.Answer, err)
		}
	}
}
