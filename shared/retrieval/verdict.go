package retrieval

import (
	"cmp"
	"slices"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/judge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// The evidence paths a verdict weighs. Each ranks procedures by its own measure, never compared
// with another path's: the semantic path by the best cosine similarity of a procedure's
// candidates, the lexical path by the best BM25 score of its sections (searched locally, the
// same index in every mode), the front-matter path by L0's weight of its keywords, entities
// and title.
const (
	pathSemantic = iota
	pathLexical
	pathFront
	pathCount
)

var pathNames = [pathCount]string{PathSemantic, PathLexical, PathFrontMatter}

// procScore is one procedure's score on one path, with the source of its best section there.
type procScore struct {
	doc    string
	score  float64
	source string
}

// pathView is one path's ranking of procedures, best first, each procedure once.
type pathView struct {
	present bool
	procs   []procScore
}

// add offers a procedure's section score: the procedure keeps its best.
func (v *pathView) add(doc string, score float64, source string) {
	v.present = true
	for i := range v.procs {
		if v.procs[i].doc == doc {
			if score > v.procs[i].score {
				v.procs[i].score, v.procs[i].source = score, source
			}
			return
		}
	}
	v.procs = append(v.procs, procScore{doc: doc, score: score, source: source})
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

// runnerUp returns the best procedure other than doc.
func (v *pathView) runnerUp(doc string) (procScore, bool) {
	for _, p := range v.procs {
		if p.doc != doc {
			return p, true
		}
	}
	return procScore{}, false
}

// Agreement tunes how the evidence paths' agreement decides a verdict (see docs/retrieval.md,
// "Evidence state").
type Agreement struct {
	// SemanticClose is the cosine difference within which another procedure is as good as the
	// semantic favourite: a real retriever's errors sit that close (near neighbours first).
	// SemanticDecisive is the margin over every other procedure from which the semantic
	// favourite stands alone against a lexical path that prefers another procedure.
	SemanticClose, SemanticDecisive float64
	// LexicalClose is the share of the lexical favourite's BM25 score from which another
	// procedure is a close runner-up; LexicalHeld the share of the favourite's score a
	// procedure the semantic path decisively prefers must hold lexically.
	LexicalClose, LexicalHeld float64
	// FrontClose is the share of the front-matter favourite's weight from which another
	// procedure is as well named; FrontMin the weight below which front matter has no opinion.
	FrontClose, FrontMin float64
}

// agreement is the paths' agreement the verdict weighs, chosen on the development sets of eval/.
var agreement = Agreement{SemanticClose: 0.05, SemanticDecisive: 0.055, LexicalClose: 0.8, LexicalHeld: 0.5,
	FrontClose: 0.8, FrontMin: 1.0}

// views builds the three paths' rankings: the semantic candidates (a semantic provider's, when
// L1 answered), the lexical search of the local sections, and L0's front-matter matches.
func (s *Service) views(l *lexical.Lang, conf confinement, query []string, weights map[string]float64, cands []port.Candidate, lexicalCands bool, matches []lexical.FrontMatch) [pathCount]pathView {
	var v [pathCount]pathView
	// One array for the three paths' procedures, each path a stretch of it (grown only past
	// pathProcs procedures).
	buf := make([]procScore, 0, pathCount*pathProcs)
	for i := range v {
		v[i].procs = buf[i*pathProcs : i*pathProcs : (i+1)*pathProcs]
	}
	if s.provider.Semantic() {
		for _, c := range cands {
			v[pathSemantic].add(c.DocumentID, c.Score, c.Source)
		}
	}
	if lexicalCands {
		for _, c := range cands {
			v[pathLexical].add(c.DocumentID, c.Score, c.Source)
		}
	} else {
		hits := l.SearchWeighted(query, weights, "", lexicalPool)
		if conf.on() {
			hits = l.SearchWeightedIn(query, weights, conf.doc, lexicalPool)
		}
		for _, h := range hits {
			d, _ := l.Doc(h.Passage)
			v[pathLexical].add(d.ID, h.Score, l.Source(h.Passage))
		}
	}
	for _, m := range matches {
		if m.Weight <= 0 {
			continue
		}
		d := l.Docs[m.Doc]
		src := ""
		if m.Passage >= 0 && m.Passage < len(l.Passages) {
			src = l.Source(m.Passage)
		}
		v[pathFront].add(d.ID, m.Weight, src)
	}
	for i := range v {
		v[i].sort()
	}
	return v
}

// pathProcs is how many procedures each path ranks without growing its list.
const pathProcs = 8

// lexicalPool is how many sections the lexical path ranks.
const lexicalPool = 12

// Bases of a verdict (relevance.basis).
const (
	BasisBoth     = "semantic+lexical"
	BasisSemantic = "semantic"
	BasisLexical  = "lexical"
	BasisNone     = "none"
)

// stance is one path's position on the primary block's procedure.
type stance struct {
	favours  string // another procedure the path ranks clearly above it
	close    string // a runner-up the path ranks about as high as it
	decisive bool   // the path ranks it first, no other close
}

// stances reads each path's position on doc.
func (s *Service) stances(doc string, v *[pathCount]pathView) [pathCount]stance {
	a := agreement
	var out [pathCount]stance
	for i := range v {
		first, ok := v[i].first()
		if !ok || i == pathFront && first.score < a.FrontMin {
			continue // the path has no opinion
		}
		own, ranked := v[i].score(doc)
		if first.doc != doc && (!ranked || beats(i, first.score, own)) {
			out[i].favours = first.doc
			continue
		}
		if ru, ok := v[i].runnerUp(doc); ok && a.near(i, ru.score, own) {
			out[i].close = ru.doc
			continue
		}
		out[i].decisive = true
	}
	return out
}

// beats reports whether a procedure's score x on path i is clearly above y: any higher cosine,
// a BM25 score more than 1 % higher (closer is the same evidence, see ScaleOf), a
// front-matter weight more than 5 % higher.
func beats(i int, x, y float64) bool {
	switch i {
	case pathLexical:
		return x > y*1.01
	case pathFront:
		return x > y*1.05
	}
	return x > y
}

// near reports whether a runner-up's score r on path i is as good as the procedure's own p.
func (a Agreement) near(i int, r, p float64) bool {
	switch i {
	case pathLexical:
		return r >= a.LexicalClose*p
	case pathFront:
		return r >= a.FrontClose*p
	}
	return p-r < a.SemanticClose
}

// weigh decides whether the paths let a strong base judgement of doc stand: no path may prefer
// another procedure, and at least one must be decisive (doc first, no other procedure close).
// Lexical evidence alone (the demo provider, or L1 switched off) has two paths, BM25 and the
// front matter, under the same rule, except that the front matter alone never decides what the
// lexical search cannot tell apart; a semantic provider that is down or found nothing grounds
// nothing at all (assess), and weigh only says what the other paths showed. With the semantic path present, a
// semantic favourite ahead of every other procedure by SemanticDecisive stands against a lexical
// or front-matter path that prefers another procedure, as long as the lexical path still gives
// it LexicalHeld of its favourite's score; a semantic path that prefers another procedure is
// never overruled. It says why when it does not let the judgement stand, and names an overruled
// path when it does.
func (s *Service) weigh(doc string, v *[pathCount]pathView) (string, bool) {
	st := s.stances(doc, v)
	sem := st[pathSemantic]
	if sem.favours != "" {
		return "the semantic search ranks " + sem.favours + " above " + doc, false
	}
	var against []string
	for _, i := range [2]int{pathLexical, pathFront} {
		if st[i].favours != "" {
			against = append(against, pathWords[i]+" "+st[i].favours)
		}
	}
	if len(against) > 0 {
		if v[pathSemantic].present && s.semanticDecisive(doc, v) {
			return "the semantic margin is decisive over " + strings.Join(against, " and "), true
		}
		return strings.Join(against, " and ") + " rather than " + doc, false
	}
	for i := range st {
		if !st[i].decisive {
			continue
		}
		if i == pathFront && !v[pathSemantic].present && st[pathLexical].close != "" {
			// Lexical evidence alone: the front matter's names do not decide what the sections'
			// own words cannot tell apart (keywords such as "lock" or "ticket" name several
			// situations).
			return "the lexical search does not tell it apart from " + st[pathLexical].close +
				", and the front matter alone does not decide", false
		}
		return "", true
	}
	if c := cmp.Or(sem.close, st[pathLexical].close, st[pathFront].close); c != "" {
		return "no path tells it apart from " + c, false
	}
	return "no evidence path ranks it first", false
}

// pathWords say what a path that prefers a procedure does.
var pathWords = [pathCount]string{"the semantic search ranks first", "the lexical search ranks first", "the front matter names"}

// semanticDecisive reports whether the semantic path ranks doc ahead of every other procedure by
// SemanticDecisive, and the lexical path still gives doc LexicalHeld of its favourite's score.
func (s *Service) semanticDecisive(doc string, v *[pathCount]pathView) bool {
	a := agreement
	own, ok := v[pathSemantic].score(doc)
	if !ok {
		return false
	}
	if ru, ok := v[pathSemantic].runnerUp(doc); ok && own-ru.score < a.SemanticDecisive {
		return false
	}
	lexOwn, _ := v[pathLexical].score(doc)
	lexFirst, ok := v[pathLexical].first()
	return !ok || lexOwn >= a.LexicalHeld*lexFirst.score
}

// maxAlternatives is how many competing procedures relevance.alternatives names.
const maxAlternatives = 3

// alternatives names the procedures the paths favour over doc, or rank about as high, each with
// its best block's source (the evidence blocks' when one of them is its, else the path's) and the
// paths that favour it. Nil when no path disagrees.
func (s *Service) alternatives(l *lexical.Lang, doc string, v *[pathCount]pathView, blocks []ranked) []lookup.Alternative {
	st := s.stances(doc, v)
	var out []lookup.Alternative
	for i := range st {
		for _, other := range [2]string{st[i].favours, st[i].close} {
			if other == "" || other == doc {
				continue
			}
			k := slices.IndexFunc(out, func(a lookup.Alternative) bool { return a.DocumentID == other })
			if k < 0 {
				if len(out) == maxAlternatives {
					continue
				}
				out = append(out, s.alternative(l, other, v, blocks))
				k = len(out) - 1
			}
			out[k].FavouredBy = appendUnique(out[k].FavouredBy, pathNames[i])
		}
	}
	return out
}

// alternative describes the procedure doc as an alternative.
func (s *Service) alternative(l *lexical.Lang, doc string, v *[pathCount]pathView, blocks []ranked) lookup.Alternative {
	a := lookup.Alternative{DocumentID: doc, FavouredBy: []string{}}
	for _, b := range blocks {
		if b.DocumentID == doc {
			a.Title, a.Source = b.Title, b.Source
			return a
		}
	}
	for i := range v {
		for _, p := range v[i].procs {
			if p.doc == doc && p.source != "" && a.Source == "" {
				a.Source = p.source
			}
		}
	}
	if l == nil {
		return a
	}
	if di := l.DocIndex(doc); di >= 0 {
		a.Title = l.Docs[di].Title
	}
	return a
}

// pathSignals describes each path's view of doc for evaluation tools.
func pathSignals(doc string, v *[pathCount]pathView) map[string]PathSignal {
	out := make(map[string]PathSignal, pathCount)
	for i := range v {
		first, ok := v[i].first()
		if !ok {
			continue
		}
		ps := PathSignal{First: first.doc, FirstScore: first.score}
		ps.Own, ps.Ranked = v[i].score(doc)
		if ru, ok := v[i].runnerUp(doc); ok {
			ps.RunnerUp, ps.RunnerUpScore = ru.doc, ru.score
		}
		out[pathNames[i]] = ps
	}
	return out
}

// maxSectionReasons bounds the section hit reasons of one block.
const maxSectionReasons = 8

// ownReasons makes each block's hit reasons its own: the question's words its section holds
// ("section:<word>", each as the question wrote it, folded, or by its index term when no word of
// the question stems to it, as for a synonym's), and its procedure's front-matter hits (the "l0:"
// reasons) only on the procedure's first block, where they are the procedure's, not repeated
// on every section of it.
func ownReasons(l *lexical.Lang, text string, question judge.Question, blocks []ranked) {
	var wbuf [32][2]string
	written := wbuf[:0] // a question word's stem and the word
	for _, tok := range l.Analyzer.Tokens(text) {
		if len(written) == cap(wbuf) {
			break
		}
		if st := l.Analyzer.Stem(tok); !slices.ContainsFunc(written, func(w [2]string) bool { return w[0] == st }) {
			written = append(written, [2]string{st, tok})
		}
	}
	// One array holds every block's reasons, each block its own stretch of it.
	n := 0
	for _, b := range blocks {
		n += len(b.HitReasons) + maxSectionReasons
	}
	all := make([]string, 0, n)
	var hbuf [maxSectionReasons]string
	var mbuf [16][2]string
	made := mbuf[:0] // an index term and its reason
	for i := range blocks {
		b := &blocks[i]
		first := !slices.ContainsFunc(blocks[:i], func(o ranked) bool { return o.DocumentID == b.DocumentID })
		from := len(all)
		for _, r := range b.HitReasons {
			if first || !strings.HasPrefix(r, "l0:") {
				all = append(all, r)
			}
		}
		held := hbuf[:0]
		if _, sec := b.section(l); sec != nil {
			held = judge.AppendHeld(l, question, b.localPassage, held, maxSectionReasons)
		}
		for _, t := range held {
			// A word's reason is made once per lookup, however many blocks hold it.
			k := slices.IndexFunc(made, func(m [2]string) bool { return m[0] == t })
			if k < 0 {
				w := t
				if i := slices.IndexFunc(written, func(w [2]string) bool { return w[0] == t }); i >= 0 {
					w = written[i][1]
				}
				made = append(made, [2]string{t, sectionReason + w})
				k = len(made) - 1
			}
			all = append(all, made[k][1])
		}
		b.HitReasons = all[from:len(all):len(all)]
	}
}

// sectionReason prefixes a question word the block's own section holds.
const sectionReason = "section:"
