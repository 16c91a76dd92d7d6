package retrieval

import (
	"slices"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
)

// stance is one path's position on the primary block's procedure.
type stance struct {
	favours  string // another procedure the path ranks clearly above it
	close    string // a runner-up the path ranks about as high as it
	decisive bool   // the path ranks it first, no other close
}

// stances reads each path's position on doc, in the table's order, appended to out.
func (v *pathViews) stances(doc string, out []stance) []stance {
	for i, p := range v.paths {
		var st stance
		if ps, ok := v.list[i].signal(doc); ok {
			st = stanceOf(p, ps, doc)
		}
		out = append(out, st)
	}
	return out
}

// stanceOf is the path p's position on doc, read from its view of doc (ps): none when the path
// has no opinion; it favours its favourite when that is another procedure clearly above doc (or
// doc is not ranked), holds a runner-up close when one is as good as doc, and is decisive
// otherwise. The verdict (stances) and the calibration (GroundedAtTie) read it alike.
func stanceOf(p evidencePath, ps PathSignal, doc string) stance {
	switch {
	case !p.opinion(ps.FirstScore):
		return stance{}
	case ps.First != doc && (!ps.Ranked || p.beats(ps.FirstScore, ps.Own)):
		return stance{favours: ps.First}
	case ps.RunnerUp != "" && p.near(ps.RunnerUpScore, ps.Own):
		return stance{close: ps.RunnerUp}
	}
	return stance{decisive: true}
}

// weigh decides whether the paths let a strong base judgement of doc stand: no path may prefer
// another procedure, and at least one must be decisive (doc first, no other procedure close).
// Lexical evidence alone (the demo provider, or L1 switched off) has two paths, BM25 and the
// front matter, under the same rule, except that the front matter alone never decides what the
// lexical search cannot tell apart (seconding); a semantic provider that is down or found
// nothing grounds nothing at all (assess), and weigh only says what the other paths showed. On
// lexical evidence alone, a runner-up the front matter holds close to the procedure keeps it from
// grounded even where the lexical search is decisive (rivalled). A
// leading path (the semantic search) ahead of every other procedure by its decisive margin
// stands against the other paths that prefer another procedure, as long as every holding path
// (the lexical search) still holds doc; a leading path that prefers another procedure is never
// overruled. It says why when it does not let the judgement stand, and names an overruled path
// when it does.
func (s *Service) weigh(doc string, v *pathViews) (string, bool) {
	var buf [len(evidencePaths)]stance
	st := v.stances(doc, buf[:0])
	var against []string
	tie := "" // a leading path's preference that every other path outvotes
	for i, p := range v.paths {
		if st[i].favours == "" {
			continue
		}
		if lead, ok := p.(leading); ok {
			if ps, _ := v.list[i].signal(doc); !lead.tied(ps, doc) || !decidedByTheOthers(i, st) {
				return p.prefers(st[i].favours) + " above " + doc, false
			}
			tie = p.prefers(st[i].favours) + " above " + doc + " only by a tie, and every other path is decisive for " + doc
			continue
		}
		against = append(against, p.prefers(st[i].favours))
	}
	if len(against) > 0 {
		if p, ok := v.overruling(doc); ok {
			return "the " + p.name() + " margin is decisive over " + strings.Join(against, " and "), true
		}
		return strings.Join(against, " and ") + " rather than " + doc, false
	}
	for i, p := range v.paths {
		if !st[i].decisive {
			continue
		}
		if sec, ok := p.(seconding); ok && !v.led() {
			if k := v.index(sec.seconds()); k >= 0 && st[k].close != "" {
				return sec.undecided(st[k].close), false
			}
		}
		if reason, rivalled := v.rivalled(st); rivalled {
			return reason, false
		}
		return tie, true
	}
	for i := range st {
		if st[i].close != "" {
			return "no path tells it apart from " + st[i].close, false
		}
	}
	return "no evidence path ranks it first", false
}

// rivalled says why a seconding path keeps the verdict from grounded on lexical evidence alone
// (no leading path has spoken): it holds a runner-up close to the procedure (st are the paths'
// stances on it), a situation the question names as much.
func (v *pathViews) rivalled(st []stance) (string, bool) {
	if v.led() {
		return "", false
	}
	for i, p := range v.paths {
		if sec, ok := p.(seconding); ok && st[i].close != "" {
			return sec.rivalled(st[i].close), true
		}
	}
	return "", false
}

// decidedByTheOthers reports whether every path but the one at lead is decisive for the
// procedure (st are the paths' stances on it).
func decidedByTheOthers(lead int, st []stance) bool {
	for j := range st {
		if j != lead && !st[j].decisive {
			return false
		}
	}
	return len(st) > 1
}

// overruling returns the leading path that ranks doc ahead of every other procedure by its
// decisive margin while every holding path still holds doc, if there is one.
func (v *pathViews) overruling(doc string) (evidencePath, bool) {
	for i, p := range v.paths {
		if lead, ok := p.(leading); !ok || !v.list[i].present || !lead.decisive(doc, &v.list[i]) {
			continue
		}
		held := true
		for k, q := range v.paths {
			if h, ok := q.(holding); ok && !h.holds(doc, &v.list[k]) {
				held = false
			}
		}
		if held {
			return p, true
		}
	}
	return nil, false
}

// led reports whether a leading path has spoken (ranks any procedure).
func (v *pathViews) led() bool {
	for i, p := range v.paths {
		if _, ok := p.(leading); ok && v.list[i].present {
			return true
		}
	}
	return false
}

// maxAlternatives is how many competing procedures relevance.alternatives names.
const maxAlternatives = 3

// alternatives names the procedures the paths favour over doc, or rank about as high, each with
// its best block's source (the evidence blocks' when one of them is its, else the path's) and the
// paths that favour it. Nil when no path disagrees.
func (s *Service) alternatives(l *lexical.Lang, doc string, v *pathViews, blocks []ranked) []lookup.Alternative {
	var buf [len(evidencePaths)]stance
	st := v.stances(doc, buf[:0])
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
			out[k].FavouredBy = appendUnique(out[k].FavouredBy, v.paths[i].name())
		}
	}
	return out
}

// alternative describes the procedure doc as an alternative.
func (s *Service) alternative(l *lexical.Lang, doc string, v *pathViews, blocks []ranked) lookup.Alternative {
	a := lookup.Alternative{DocumentID: doc, FavouredBy: []string{}}
	for _, b := range blocks {
		if b.DocumentID == doc {
			a.Title, a.Source = b.Title, b.Source
			return a
		}
	}
	a.Source, _, _ = v.sectionOf(l, doc)
	if l == nil {
		return a
	}
	if di := l.DocIndex(doc); di >= 0 {
		a.Title = l.Docs[di].Title
	}
	return a
}

// pathSignals describes each path's view of doc for evaluation tools.
func pathSignals(doc string, v *pathViews) map[string]PathSignal {
	out := make(map[string]PathSignal, len(v.list))
	for i := range v.list {
		if ps, ok := v.list[i].signal(doc); ok {
			out[v.paths[i].name()] = ps
		}
	}
	return out
}

// GroundedAtTie is the verdict a lookup judged with the semantic search's tie (SemanticTie),
// grounded or not, and whose signals are sig, would have at another tie: the same, unless the
// semantic search prefers another procedure to the primary block's, in which case it is grounded
// exactly when the primary's own evidence is strong (Signals.Base), the preference is less than
// tie and every other path is decisive for the primary, as weigh judges. make calibrate fits the
// tie with it from one lookup per question.
func GroundedAtTie(grounded bool, sig Signals, tie float64) bool {
	var buf [len(evidencePaths)]stance
	st, lead := buf[:0], -1
	for i, p := range evidencePaths {
		var s stance
		if ps, ok := sig.Paths[p.name()]; ok {
			s = stanceOf(p, ps, sig.Primary)
		}
		if p == evidencePath(semanticSearch) {
			lead = i
		}
		st = append(st, s)
	}
	sem := sig.Paths[PathSemantic]
	if lead < 0 || st[lead].favours == "" || !sem.Ranked {
		return grounded // the semantic search does not prefer another, or prefers it with the primary unranked
	}
	at := *semanticSearch
	at.tie = tie
	return sig.Base && at.tied(sem, sig.Primary) && decidedByTheOthers(lead, st)
}
