package retrieval

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// Versions: a lookup or ask answers from the procedure versions in force on one day, the
// request's as_of or today in the configured time zone. The analysed index is the epoch's of
// that day (lexical.Epochs), so L0 and BM25 see only the versions in force. A semantic
// candidate RAGcore returns for another version (RAGcore not yet switched, or still serving a
// withdrawn version) is outdated: it is kept out of fusion and of the verdict, so it never
// grounds an answer nor counts as semantic support, and it is returned after the evidence
// blocks marked "outdated", never as primary or supplement. A block whose procedure has a
// version coming within the upcoming window carries next_version.

// WithVersions makes the service answer from the versions in force on the day asked: epochs
// holds every version and analyses each set in force on first use; loc is the zone in which
// effective dates begin (KNOWLEDGE_TIME_ZONE); upcomingDays is the window of next_version.
func (s *Service) WithVersions(epochs *lexical.Epochs, loc *time.Location, upcomingDays int) *Service {
	s.epochs, s.loc, s.upcomingDays = epochs, loc, upcomingDays
	return s
}

// WithClock replaces the clock that tells today (and the latencies): tests never read the wall
// clock for a day. Today's set of versions in force on that clock is noted, so that the first
// switch after it is logged (see noteToday).
func (s *Service) WithClock(now func() time.Time) *Service {
	s.now = now
	s.noteStart()
	return s
}

// dayView is what a call knows of the versions: the day it answers from and every version on
// file (nil when the service knows none, see lexical.Single).
type dayView struct {
	day      string
	asked    bool
	corpus   *knowledge.Corpus
	upcoming int
}

// epoch returns the day a call answers from, and its analysed epoch.
func (s *Service) epoch(asOf string) (dayView, *lexical.Epoch) {
	v := dayView{day: asOf, asked: asOf != "", corpus: s.epochs.Corpus(), upcoming: s.upcomingDays}
	if v.asked {
		return v, s.epochs.At(v.day)
	}
	v.day = s.todayText()
	ep := s.epochs.Today(v.day)
	if v.corpus != nil {
		s.noteToday(v.day, ep)
	}
	return v, ep
}

// todayText is knowledge.Today of now, the text kept while the day lasts: formatted on the stack
// and compared with the last one, so that a lookup without a date makes no string of it.
func (s *Service) todayText() string {
	var buf [len(time.DateOnly)]byte
	b := s.now().In(s.loc).AppendFormat(buf[:0], time.DateOnly)
	if last := s.today.Load(); last != nil && *last == string(b) {
		return *last
	}
	day := string(b)
	s.today.Store(&day)
	return day
}

// noteToday logs the switch of today's set of versions in force (at midnight in the zone, on an
// effective date) once per process: the first lookup of today that sees a set other than the
// one the last lookup of today saw swaps it in and says which versions changed.
func (s *Service) noteToday(day string, ep *lexical.Epoch) {
	prev := s.todaySince.Load()
	if prev != nil && *prev == ep.Since {
		return
	}
	since := ep.Since
	if !s.todaySince.CompareAndSwap(prev, &since) || prev == nil {
		return // another lookup logged it, or this is the first lookup: nothing switched
	}
	lang := knowledge.Languages[0]
	before, after := v0(s.epochs.Corpus(), *prev, lang), v0(s.epochs.Corpus(), since, lang)
	var changed []string
	for id, to := range after {
		if from := before[id]; from != to {
			changed = append(changed, id+" "+cmp.Or(from, "(none)")+" -> "+to)
		}
	}
	for id, from := range before {
		if _, ok := after[id]; !ok {
			changed = append(changed, id+" "+from+" -> (none)")
		}
	}
	slices.Sort(changed)
	s.log.Info("versions in force switched", "day", day, "time_zone", s.loc.String(), "since", since,
		"previous_since", *prev, "switched", changed, "procedures_in_force", len(after))
}

// v0 is the version in force of each procedure of lang in the set in force since an effective
// date ("" for before the first one).
func v0(c *knowledge.Corpus, since, lang string) map[string]string {
	day := cmp.Or(since, "0000-01-01")
	out := map[string]string{}
	for _, d := range c.On(day).Documents(lang) {
		out[d.ID] = d.Version
	}
	return out
}

// noteStart records today's set in force on the service's clock (set last, by WithClock), so
// that the first switch after it is logged.
func (s *Service) noteStart() {
	if s.epochs.Corpus() == nil {
		return
	}
	since := s.epochs.Today(knowledge.Today(s.now(), s.loc)).Since
	s.todaySince.Store(&since)
}

// nothingInForce says why a day on which no procedure is in force (a day before the first
// version on file of every procedure) has no evidence; "" when some procedure is in force.
func (v dayView) nothingInForce(l *lexical.Lang) string {
	if v.corpus == nil || l.InForce() > 0 {
		return ""
	}
	if dates := v.corpus.EffectiveDates(); len(dates) > 0 {
		return fmt.Sprintf("no procedure is in force on %s: the first version on file takes effect on %s", v.day, dates[0])
	}
	return fmt.Sprintf("no procedure is in force on %s", v.day)
}

// partition keeps in cands, in place, the candidates of the version in force (their source and
// effective date those of its file), and appends the others to outdated.
func (v dayView) partition(lang string, cands, outdated []port.Candidate) ([]port.Candidate, []port.Candidate) {
	if v.corpus == nil {
		return cands, outdated
	}
	kept := cands[:0]
	for _, c := range cands {
		d := v.corpus.InForce(lang, c.DocumentID, v.day)
		if d == nil || (c.Version != "" && c.Version != d.Version) {
			if f := v.file(lang, c.DocumentID, c.Version); f != nil {
				c.EffectiveDate = f.EffectiveDate
				c.Source = knowledge.SectionSource(f.Path, c.Anchor)
			}
			outdated = append(outdated, c)
			continue
		}
		c.EffectiveDate = d.EffectiveDate
		if c.Anchor != "" {
			c.Source = knowledge.SectionSource(d.Path, c.Anchor)
		}
		kept = append(kept, c)
	}
	return kept, outdated
}

// file is the version on file of a procedure, nil when there is none.
func (v dayView) file(lang, id, version string) *knowledge.Document {
	if v.corpus == nil {
		return nil
	}
	for _, d := range v.corpus.Versions(lang, id) {
		if d.Version == version {
			return d
		}
	}
	return nil
}

// current reports whether version is the version of a procedure in force on the day; true when
// no version is known.
func (v dayView) current(lang, id, version string) bool {
	if v.corpus == nil {
		return true
	}
	d := v.corpus.InForce(lang, id, v.day)
	return d != nil && (version == "" || version == d.Version)
}

// announce sets next_version on the blocks whose procedure has a version coming within the
// upcoming window.
func (v dayView) announce(lang string, blocks []ranked) {
	if v.corpus == nil || v.upcoming <= 0 {
		return
	}
	for i := range blocks {
		if d := v.corpus.NextVersion(lang, blocks[i].DocumentID, v.day, v.upcoming); d != nil {
			blocks[i].NextVersion = &lookup.NextVersion{Version: d.Version, EffectiveDate: d.EffectiveDate}
		}
	}
}

// announceSources sets next_version on an answer's sources whose procedure has a version coming
// within the upcoming window, as announce does on a lookup's blocks.
func (v dayView) announceSources(lang string, sources []port.AnswerSource) {
	if v.corpus == nil || v.upcoming <= 0 {
		return
	}
	for i := range sources {
		if d := v.corpus.NextVersion(lang, sources[i].DocumentID, v.day, v.upcoming); d != nil {
			sources[i].NextVersion = &port.NextVersion{Version: d.Version, EffectiveDate: d.EffectiveDate}
		}
	}
}

// outdatedBlocks are the outdated candidates as blocks after the evidence, ranked on from it.
func outdatedBlocks(cands []port.Candidate, kind string, higher bool, reason string, after int) []lookup.EvidenceBlock {
	out := make([]lookup.EvidenceBlock, 0, len(cands))
	for i, c := range cands {
		out = append(out, lookup.EvidenceBlock{Source: c.Source, DocumentID: c.DocumentID, Version: c.Version,
			EffectiveDate: c.EffectiveDate, Title: c.Title, Breadcrumb: knowledge.Breadcrumb(c.Title, c.Section),
			Section: c.Section, Category: c.Category, RetrievalLayer: lookup.LayerL1, Content: c.Content,
			HitReasons: []string{reason, reasonOutdated}, Score: port.Score{Value: c.Score, Kind: kind, HigherIsBetter: higher},
			Rank: after + i + 1, Outdated: true})
	}
	return out
}

// markSources marks the cited sources of an answer whose version is not in force, and returns
// those that are.
func (v dayView) markSources(lang string, sources []port.AnswerSource) []port.AnswerSource {
	current := make([]port.AnswerSource, 0, len(sources))
	for i := range sources {
		if !v.current(lang, sources[i].DocumentID, sources[i].Version) {
			sources[i].Outdated = true
			continue
		}
		current = append(current, sources[i])
	}
	return current
}

// sourcePath is the file of the version an answer cites, the procedure's <id>.md path when it
// is not on file.
func (v dayView) sourcePath(lang, id, version string) string {
	if f := v.file(lang, id, version); f != nil {
		return f.Path
	}
	return knowledge.DocumentPath(lang, id)
}
