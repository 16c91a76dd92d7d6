package retrieval

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// evidencePaths are the evidence paths a verdict weighs, in the order it weighs them: each one
// value, in a file of its own (path_*.go). A new path is one more such file and one more line
// here (and its name in the contract's lists of paths: favoured_by in docs/openapi.yaml and
// docs/bedrock-lookup.yaml, the MCP tool's description). The array's length sizes a lookup's
// views, so that the table costs no allocation of its own.
var evidencePaths = [...]evidencePath{semanticSearch, lexicalSearch, frontMatter}

// evidencePath is one evidence path: a way of ranking procedures for a question by a measure of
// its own, never compared with another path's. The verdict reads each path's ranking through its
// stance on the primary block's procedure (stances) and weighs the stances (weigh).
//
// A path may also take a part of its own in the rule: a leading path (leading), a path a leading
// one overrules only while it holds the procedure (holding), a path that seconds another
// (seconding). A path without any of them is weighed as one more opinion: it can keep a verdict
// from being grounded by preferring another procedure, or ground one by being decisive.
type evidencePath interface {
	// name is the path's name in relevance.alternatives' favoured_by and in Signals.Paths.
	name() string
	// rank fills v with the path's ranking of the procedures for a lookup (v.add; v is sorted
	// after) and names the kind of its scores (v.kind). A path that has nothing to say leaves v
	// empty.
	rank(in pathInput, v *pathView)
	// beats reports whether a procedure's score x is clearly above another's score y.
	beats(x, y float64) bool
	// near reports whether a runner-up's score r is as good as the procedure's own score own.
	near(r, own float64) bool
	// opinion reports whether the path, whose favourite scores first, has an opinion at all.
	opinion(first float64) bool
	// prefers is the reason's words for the path ranking the procedure other first ("the
	// lexical search ranks first b").
	prefers(other string) string
}

// leading is a path whose preference for another procedure is not overruled ("<prefers> above
// <the procedure>") unless it is a tie that every other path decides for the procedure, and
// whose decisive margin for the procedure stands against the other paths' preference for another
// ("the <name> margin is decisive over …"): the semantic search.
type leading interface {
	// decisive reports whether v ranks doc ahead of every other procedure by the path's margin.
	decisive(doc string, v *pathView) bool
	// tied reports whether the path's view of doc (ps) ranks another procedure ahead of doc by
	// less than the path's tie: a preference no firmer than its own noise.
	tied(ps PathSignal, doc string) bool
}

// holding is a path that a leading path's decisive margin overrules only while it still holds
// the procedure: the lexical search, which must give it a share of its favourite's score.
type holding interface {
	// holds reports whether v still holds doc against its favourite.
	holds(doc string, v *pathView) bool
}

// seconding is a path whose decisive stance alone does not decide what the path it seconds
// cannot tell apart, unless a leading path has spoken: the front matter, whose names ("lock",
// "ticket") name several situations, seconds the lexical search of the sections' own words.
// Unless a leading path has spoken, a runner-up it holds close keeps the verdict from grounded
// even where the seconded path is decisive: the question names that situation as much as the
// procedure's, and its words alone do not choose between them.
type seconding interface {
	// seconds is the path it seconds.
	seconds() evidencePath
	// undecided is the reason's words when the seconded path does not tell the procedure apart
	// from other.
	undecided(other string) string
	// rivalled is the reason's words when the path holds other close to the procedure.
	rivalled(other string) string
}

// pathInput is what a lookup gives the evidence paths to rank the procedures from.
type pathInput struct {
	l    *lexical.Lang
	q    *question
	conf confinement
	// cands are L1's candidates in force; semantic tells that a semantic provider returned them,
	// lexicalCands that they are the lexical search itself (the demo provider's own unfiltered
	// candidates).
	cands        []port.Candidate
	semantic     bool
	lexicalCands bool
	// scoreKind is the kind of the candidates' scores (the provider's).
	scoreKind string
	// searched are the lexical search's best sections of the whole index when the lexical path
	// searches it (the lookup's lexicalHits): neither a confined lookup nor lexicalCands.
	searched []lexical.Hit
	// matches are L0's front-matter matches.
	matches []lexical.FrontMatch
}

// procScore is one procedure's score on one path, with the source of its best section there:
// source, or for the front matter the section its match chooses when asked (sourceIn).
type procScore struct {
	doc    string
	score  float64
	source string
	match  *lexical.FrontMatch
}

// sourceIn is the source of the procedure's best section on the path ("" when it has none).
func (p procScore) sourceIn(l *lexical.Lang) string {
	if p.source == "" && p.match != nil && l != nil {
		return l.Source(p.match.Passage(l))
	}
	return p.source
}

// pathView is one path's ranking of procedures, best first, each procedure once.
type pathView struct {
	present bool
	// kind is the kind of the path's scores (port.Score.Kind): a block that only the path's
	// ranking placed carries its score with it.
	kind  string
	procs []procScore
}

// add offers a procedure's section score: the procedure keeps its best.
func (v *pathView) add(doc string, score float64, source string) {
	v.offer(procScore{doc: doc, score: score, source: source})
}

// addMatch offers a procedure's front-matter match, whose best section is its source.
func (v *pathView) addMatch(doc string, m *lexical.FrontMatch) {
	v.offer(procScore{doc: doc, score: m.Weight, match: m})
}

func (v *pathView) offer(p procScore) {
	v.present = true
	for i := range v.procs {
		if v.procs[i].doc == p.doc {
			if p.score > v.procs[i].score {
				v.procs[i] = p
			}
			return
		}
	}
	v.procs = append(v.procs, p)
}

// sectionOf is the section of doc that the first path naming one gives (its source), with the
// path's score for it labelled with the path's kind (no kind when the path names none); false
// when no path names a section of doc.
func (v *pathViews) sectionOf(l *lexical.Lang, doc string) (string, port.Score, bool) {
	for i := range v.list {
		for _, p := range v.list[i].procs {
			if p.doc != doc {
				continue
			}
			if src := p.sourceIn(l); src != "" {
				return src, port.Score{Value: round4(p.score), Kind: v.list[i].kind, HigherIsBetter: true}, true
			}
		}
	}
	return "", port.Score{}, false
}

// sort orders the procedures best first (ties by document id).
func (v *pathView) sort() {
	slices.SortStableFunc(v.procs, func(a, b procScore) int {
		return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.doc, b.doc))
	})
}

// score returns doc's score on the path and whether the path ranks it at all.
func (v *pathView) score(doc string) (float64, bool) {
	for _, p := range v.procs {
		if p.doc == doc {
			return p.score, true
		}
	}
	return 0, false
}

// first returns the path's favourite procedure.
func (v *pathView) first() (procScore, bool) {
	if len(v.procs) == 0 {
		return procScore{}, false
	}
	return v.procs[0], true
}

// signal is the path's view of doc: its favourite, doc's own score and the best other
// procedure; false when the path ranks nothing.
func (v *pathView) signal(doc string) (PathSignal, bool) {
	first, ok := v.first()
	if !ok {
		return PathSignal{}, false
	}
	ps := PathSignal{First: first.doc, FirstScore: first.score}
	ps.Own, ps.Ranked = v.score(doc)
	if ru, ok := v.runnerUp(doc); ok {
		ps.RunnerUp, ps.RunnerUpScore = ru.doc, ru.score
	}
	return ps, true
}

// runnerUp returns the best procedure other than doc.
func (v *pathView) runnerUp(doc string) (procScore, bool) {
	for _, p := range v.procs {
		if p.doc != doc {
			return p, true
		}
	}
	return procScore{}, false
}

// pathProcs is how many procedures each path ranks without growing its list.
const pathProcs = 8

// pathViews are one lookup's rankings, one per path of the table they were made by (paths), in
// its order. The views of the service's table and their procedures live in the value itself,
// one allocation however many paths the table has; a longer table (a test's) grows.
type pathViews struct {
	paths []evidencePath
	list  []pathView
	room  [len(evidencePaths)]pathView
	procs [len(evidencePaths) * pathProcs]procScore
}

// pathViewsPool keeps the views of finished lookups for the next: a lookup's views are 1.1 kB,
// a tenth of the bytes it allocated, and so a tenth of the collector's work it caused.
var pathViewsPool = sync.Pool{New: func() any { return new(pathViews) }}

// newPathViews makes the empty views of the paths, from the pool: release them when no one reads
// them any more.
func newPathViews(paths []evidencePath) *pathViews {
	v := pathViewsPool.Get().(*pathViews)
	v.paths = paths
	v.list = v.room[:0]
	if len(paths) > len(v.room) {
		v.list = make([]pathView, 0, len(paths))
	}
	v.list = v.list[:len(paths)]
	for i := range v.list {
		if k := i * pathProcs; k < len(v.procs) {
			v.list[i].procs = v.procs[k:k:min(k+pathProcs, len(v.procs))]
		}
	}
	return v
}

// release empties the views (their strings are the index's, but the pool must not keep them
// alive) and returns them to the pool; nil is nothing to release.
func (v *pathViews) release() {
	if v == nil {
		return
	}
	*v = pathViews{}
	pathViewsPool.Put(v)
}

// absent is the view of a path a table does not have: it ranks nothing. Read only.
var absent pathView

// of returns path p's view, absent's when the table has no such path.
func (v *pathViews) of(p evidencePath) *pathView {
	if i := v.index(p); i >= 0 {
		return &v.list[i]
	}
	return &absent
}

// index returns p's place in the table, -1 when it has none.
func (v *pathViews) index(p evidencePath) int {
	for i, q := range v.paths {
		if q == p {
			return i
		}
	}
	return -1
}

// rankPaths ranks the procedures on every path of the service's table: the semantic candidates (a
// semantic provider's, when L1 answered), the lexical search of the local sections, L0's
// front-matter matches.
func (s *Service) rankPaths(in pathInput) *pathViews {
	v := newPathViews(s.paths)
	for i, p := range v.paths {
		p.rank(in, &v.list[i])
		v.list[i].sort()
	}
	return v
}
