package retrieval

import (
	"slices"
	"strconv"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/judge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// confinement is the procedure a lookup is confined to after a clarification (the request's
// procedure): its index in the day's documents, -1 when the lookup considers every procedure.
type confinement struct {
	doc      int
	id       string
	category string
}

// confine resolves the request's procedure in l, the day's versions in force of the question's
// language: ErrUnknownProcedure when no procedure of that id is in force.
func confine(l *lexical.Lang, id string) (confinement, error) {
	if id == "" {
		return confinement{doc: -1}, nil
	}
	di := l.DocIndex(id)
	if di < 0 {
		return confinement{doc: -1}, domain.ErrUnknownProcedure
	}
	return confinement{doc: di, id: id, category: l.Docs[di].Category}, nil
}

// on reports whether the lookup is confined.
func (c confinement) on() bool { return c.doc >= 0 }

// matches keeps, in place, the front-matter matches of the confined procedure.
func (c confinement) matches(ms []lexical.FrontMatch) []lexical.FrontMatch {
	if !c.on() {
		return ms
	}
	return slices.DeleteFunc(ms, func(m lexical.FrontMatch) bool { return m.Doc != c.doc })
}

// candidates keeps, in place, the L1 candidates of the confined procedure: a platform that
// filters by category alone returns its neighbours too.
func (c confinement) candidates(cs []port.Candidate) []port.Candidate {
	if !c.on() {
		return cs
	}
	return slices.DeleteFunc(cs, func(cand port.Candidate) bool { return cand.DocumentID != c.id })
}

// others are the procedures an unconfined local pass ranks for the question (L0's matches and
// the lexical search), for a confined lookup's complements: the question's other parts are
// found without a second call to the provider. Nil when the lookup is not confined.
func (c confinement) others(l *lexical.Lang, q *question, matches []lexical.FrontMatch) []int {
	if !c.on() {
		return nil
	}
	var out []int
	for _, m := range matches {
		out = appendUnique(out, m.Doc)
	}
	for _, h := range l.SearchWeighted(q.terms, q.weights, "", lexicalPool) {
		out = appendUnique(out, l.Passages[h.Passage].Doc)
	}
	return out
}

// sources keeps, in place, an answer's sources of the confined procedure: a confirmed answer
// cites only that procedure.
func (c confinement) sources(srcs []port.AnswerSource) []port.AnswerSource {
	if !c.on() {
		return srcs
	}
	return slices.DeleteFunc(srcs, func(src port.AnswerSource) bool { return src.DocumentID != c.id })
}

// ConfirmedShare is the share of the language's LexicalMinPoints a confirmed procedure's lexical
// evidence must reach to ground a question on lexical evidence: once the operator has chosen the
// situation, no other procedure competes, but the procedure must still hold the question. Chosen
// on the development sets of eval/ with CoveredShare (docs/retrieval.md, "The clarifying turn").
const ConfirmedShare = 0.8

// assessConfirmed judges a lookup confined to the procedure the operator confirmed, on its own
// basis: grounded when the procedure's sections hold the question's evidence (the semantic
// search scores the procedure at least at its supported threshold, or, on lexical evidence, the
// procedure holds ConfirmedShare of the points a grounded question needs), insufficient with its
// best sections when they do not. A question naming a topic the procedures do not cover stays
// insufficient, and a semantic provider that is down grounds nothing, confirmed or not.
func (s *Service) assessConfirmed(l *lexical.Lang, q *question, blocks []ranked, l1 lookup.L1Details, views *pathViews) judgement {
	r := judgement{Relevance: lookup.Relevance{Assessment: lookup.AssessmentWeak, Basis: lookup.BasisConfirmed}, views: views, lang: l.Language}
	if len(blocks) == 0 {
		r.Assessment = lookup.AssessmentNone
		r.Reason = "the confirmed procedure holds nothing of the question"
		return r
	}
	p := blocks[0]
	sp := support(l, q, *p.EvidenceBlock)
	r.primaryDoc, r.Coverage = p.DocumentID, round4(sp.Share())
	r.SemanticSupport = p.l1 && s.provider.Semantic()
	r.signals = Signals{Support: sp, FrontWeight: p.l0Weight}
	if sp.Words < minInformativeWords {
		r.Reason = "the question has " + strconv.Itoa(sp.Words) + " informative word(s), too few to ground an answer, confirmed or not"
		return r
	}
	lex := s.lexicalEvidence(l, q, p, sp)
	r.signals.Procedure, r.signals.Points, r.signals.Uncovered = lex.proc, lex.points, lex.uncovered
	if lex.uncovered.Term != "" {
		r.Reason = lex.why + "; confirmed or not, the procedures do not cover it"
		return r
	}
	reason, ok := s.confirmedVerdict(l, lex, r.signals, l1, views)
	r.Reason = "the operator confirmed " + p.DocumentID + "; " + reason
	if ok {
		r.Assessment = lookup.AssessmentStrong
		r.signals.Base = true
	}
	return r
}

// confirmedVerdict says whether the confirmed procedure holds the question's evidence, and why.
func (s *Service) confirmedVerdict(l *lexical.Lang, lex lexicalJudgement, sig Signals, l1 lookup.L1Details, views *pathViews) (string, bool) {
	held := procedureHolds(lex, fixed(lex.points, 1))
	if s.provider.Semantic() {
		if l1.Status != lookup.L1OK {
			return held + "; the semantic search was not consulted (it " + degradedWhy(l1.Status) +
				"), and a grounded answer needs it: the procedure's closest sections are returned", false
		}
		if sc, ok := s.scaleOf(s.provider.ScoreKind()); ok && sc.Supported > 0 {
			first, _ := views.of(semanticSearch).first()
			if first.score >= sc.Supported && lex.proc.Matched > 0 {
				return "the semantic search scores its best section " + fixed(first.score, 2) + ", at or above " +
					fixed(sc.Supported, 2) + ", and " + held, true
			}
			return "the semantic search scores its best section only " + fixed(first.score, 2) + " (a confirmed procedure needs " +
				fixed(sc.Supported, 2) + "); " + held + ": the procedure does not clearly answer the question", false
		}
	}
	need := ConfirmedShare * LexicalMinPoints(l.Language)
	switch {
	case LexicallyConfirmed(sig, l.Language, ConfirmedShare, 0):
		return held + ", at least the " + fixed(need, 1) + " a confirmed procedure needs", true
	case LexicallyConfirmed(sig, l.Language, ConfirmedShare, HalfHeldShare):
		return held + ", at least half of them, with at least the " + fixed(HalfHeldShare*LexicalMinPoints(l.Language), 1) +
			" a confirmed procedure holding half the question needs, and its front matter names the question's subject (L0 weight " +
			fixed(sig.FrontWeight, 1) + ")", true
	}
	return confirmedShortfall(lex, sig, need) + ": the procedure does not clearly answer the question", false
}

// confirmedShortfall says what the confirmed procedure's lexical evidence lacks, each condition
// of LexicallyConfirmed that fails: the points (never shown rounded up to the figure they miss),
// the words held, the front matter's opinion.
func confirmedShortfall(lex lexicalJudgement, sig Signals, need float64) string {
	evidence := fixed(lex.points, 1)
	if sig.Points < need {
		evidence = below(lex.points, need) + ", a confirmed procedure needs " + fixed(need, 1)
	}
	why := procedureHolds(lex, evidence)
	if sig.Procedure.Matched < minInformativeWords {
		why += ", fewer than the " + strconv.Itoa(minInformativeWords) + " words a confirmed procedure must hold"
	}
	if sig.FrontWeight < frontMatter.min {
		why += ", and its front matter (title, keywords, entities) names the question's subject too weakly (L0 weight " +
			below(sig.FrontWeight, frontMatter.min) + ", a confirmed procedure needs " + fixed(frontMatter.min, 1) + ")"
	}
	return why
}

// procedureHolds says how much of the question the confirmed procedure holds, with its evidence
// as the caller words it.
func procedureHolds(lex lexicalJudgement, evidence string) string {
	return "the procedure holds " + strconv.Itoa(lex.proc.Matched) + " of the question's " + strconv.Itoa(lex.proc.Words) +
		" informative words (evidence " + evidence + ")"
}

// LexicallyConfirmed is the confirmed verdict's rule on lexical evidence at a share of the
// language's LexicalMinPoints (the service uses ConfirmedShare; make calibrate measures others),
// or half at most (the service uses HalfHeldShare; 0 leaves that branch out) for a procedure that
// holds half the question: the confirmed procedure holds minInformativeWords of the question's
// words, that share of the points and its front matter has an opinion, or halfHeld.
func LexicallyConfirmed(sig Signals, lang string, share, half float64) bool {
	return sig.Procedure.Matched >= minInformativeWords && sig.Points >= share*LexicalMinPoints(lang) &&
		sig.FrontWeight >= frontMatter.min || halfHeld(sig, lang, half)
}

// confinedKind labels the score of a section of the confirmed procedure that only the local
// lexical search found: its BM25 score over the procedure's sections.
const confinedKind = bm25Kind

// confinedLexical is how many of a focused lexical search's best sections of the confirmed
// procedure rankConfined places right after its primary block.
const confinedLexical = 2

// rankConfined orders the blocks of a lookup confined to the confirmed procedure so that the
// section that answers is among the first whichever path found it: the fused blocks (L1 with L0)
// keep their order, and the confinedLexical best sections of a focused lexical search of the
// procedure's own sections follow the primary block, each made a block of its own (layer L0, its
// BM25 score) when no path returned it, and the search's further sections fill the blocks up to
// topK. A semantic platform returns a handful of sections over
// every procedure, so the confirmed procedure's answering section is often not among them, or
// behind sections it cannot tell apart from it; the procedure's own sections are all in the local
// index. It returns at most topK blocks, the response's array keeping room for extra more.
func rankConfined(l *lexical.Lang, conf confinement, q *question, blocks []ranked, topK, extra int) ([]ranked, []lookup.EvidenceBlock) {
	hits := scopeAfterHits(l, judge.SearchFocusedIn(l, q.terms, q.weights, conf.doc, topK, q.answerKinds()))
	order := make([]ranked, 0, len(blocks)+len(hits))
	order = append(order, blocks...)
	for r, h := range hits {
		k := slices.IndexFunc(order, func(b ranked) bool { return b.local && b.localPassage == h.Passage })
		switch {
		case r >= confinedLexical && k < 0:
			order = append(order, localBlock(l, h, reasonConfirmed)) // the procedure's further sections fill top_k
		case r >= confinedLexical, k == 0 || k > 0 && k <= r+1:
			continue // already in the blocks, or as far up
		case k > 0:
			b := order[k]
			order = slices.Delete(order, k, k+1)
			order = slices.Insert(order, min(r+1, len(order)), b)
		default:
			order = slices.Insert(order, min(r+1, len(order)), localBlock(l, h, reasonConfirmed))
		}
	}
	return renumber(order, topK, extra)
}

// localBlock is the block of a section that only the local lexical search found (a section of
// the confirmed procedure, a complement's), with its hit reason.
func localBlock(l *lexical.Lang, h lexical.Hit, reason string) ranked {
	d, sec := l.Doc(h.Passage)
	b := &lookup.EvidenceBlock{Source: l.Source(h.Passage), DocumentID: d.ID, Version: d.Version, EffectiveDate: d.EffectiveDate,
		Title: d.Title, Breadcrumb: knowledge.Breadcrumb(d.Title, sec.Heading), Section: sec.Heading, Category: d.Category,
		Content: sec.Content, RetrievalLayer: lookup.LayerL0, HitReasons: []string{reason},
		Score: port.Score{Value: round4(h.Score), Kind: confinedKind, HigherIsBetter: true}}
	return ranked{EvidenceBlock: b, local: true, localPassage: h.Passage}
}
