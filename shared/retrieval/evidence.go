package retrieval

import (
	"math"
	"strconv"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/judge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
)

// The lexical evidence rule (the demo provider, and any lookup whose primary block has no
// semantic score) weighs how much of the question the primary block's procedure holds, counting
// only the question's informative words that the corpus knows (directly, through a compound's
// parts or through a synonym): words the procedures do not use at all (chat, typos, other
// subjects) are left out, so a long, chatty question is not judged by its length.
//
//	points = W + F + LexicalWordPoints * N
//
// where N is the number of informative words the procedure holds (any section or its front
// matter), W their IDF weight, and F the L0 weight of the procedure's front matter (keywords,
// entities, title) for the question. The evidence is strong when points reach the language's
// LexicalMinPoints and the primary block itself holds at least one of the words. The figures
// are calibrated per language on the evaluation sets of eval/ (see docs/retrieval.md): German words
// weigh less, because a compound counts by its parts.
const LexicalWordPoints = 1.5

// LexicalMinPoints is the grounded threshold of the lexical rule for a language: 14.5 in
// English, 12.5 in German; a language without one of its own takes the highest, the safe side.
func LexicalMinPoints(lang string) float64 {
	if lang == "de" {
		return 12.5
	}
	return 14.5
}

// WholeQuestionFrontWeight is the L0 weight of its procedure's front matter from which a
// question whose every informative word the primary block holds is grounded on lexical evidence
// below the language's LexicalMinPoints. Chosen on the development sets of eval/ (see
// docs/retrieval.md): of the answerable questions there that such a block holds whole but that
// fall short of the points, most match their procedure's front matter with 2.3 to 6.5; the
// off-topic and near-domain ones held whole match with at most 1.2, "how much is a train
// ticket" with 1.9.
const WholeQuestionFrontWeight = 2.3

// minInformativeWords is the fewest informative words a grounded question has: "e", "km" or
// stop words alone never ground an answer, whatever the provider's score.
const minInformativeWords = 2

// ScaleOf returns the scale of a score kind the service knows, with the configuration's default
// grounded thresholds; false for another kind.
func ScaleOf(kind string) (ScoreScale, bool) {
	return DefaultOptions().scaleOf(kind)
}

// scaleOf returns the scale of a score kind, the cosine thresholds from the options.
func (o Options) scaleOf(kind string) (ScoreScale, bool) {
	switch kind {
	case "cosine_similarity":
		return ScoreScale{Clear: 0.05, Grounded: o.GroundedCosine, Supported: o.SupportedCosine}, true
	case "bm25":
		// BM25 scores of different sections are not calibrated against each other well enough
		// for one to overrule the fused ranks: no margin is clear. Two scores within 1 % of
		// each other are closer than BM25 can tell sections apart, so they share a rank and
		// the front matter decides.
		return ScoreScale{Clear: math.Inf(1), Relative: true, Tie: 0.01}, true
	}
	return ScoreScale{}, false
}

// scaleOf is the options' scaleOf.
func (s *Service) scaleOf(kind string) (ScoreScale, bool) { return s.opts.scaleOf(kind) }

// support is the lexical support of a block for the question's words.
func support(l *lexical.Lang, q *question, b lookup.EvidenceBlock) judge.Support {
	if pi, ok := l.PassageOf(b.DocumentID, anchorOf(b.Source)); ok && !l1Chunk(l, b, pi) {
		return judge.PassageSupport(l, q.resolved, pi)
	}
	// An L1 passage that is not one of the local copy's sections (another version, or a chunk
	// of one) is judged on its own text.
	return judge.TextSupport(l, q.resolved, b.Title+"\n"+b.Section+"\n"+b.Content, b.DocumentID)
}

// l1Chunk reports whether the block's content is only part of the local section (a chunk).
func l1Chunk(l *lexical.Lang, b lookup.EvidenceBlock, passage int) bool {
	_, sec := l.Doc(passage)
	return b.Content != sec.Content
}

// assess judges the evidence. A base judgement first, on what the primary block really has: a
// semantic score on its own scale when a semantic provider returned it (from the supported score
// on, only together with strong lexical evidence), else the lexical evidence rule. Then the
// evidence paths are weighed against each other (weigh): a strong base is grounded only when no
// path prefers another procedure and one of them is decisive, so that a retriever's error does
// not become a confident wrong answer. Semantic support is claimed only for candidates of a
// semantic provider that survived into the blocks.
func (s *Service) assess(l *lexical.Lang, q *question, blocks []ranked, l1 lookup.L1Details, views *pathViews) judgement {
	if len(blocks) == 0 {
		r := judgement{Relevance: lookup.Relevance{Assessment: lookup.AssessmentNone, Basis: lookup.BasisNone, Reason: "no procedure matched the question"}}
		if l1.Status == lookup.L1Failed || l1.Status == lookup.L1Unavailable {
			r.Reason = "the knowledge provider could not be reached and no procedure matched the question's keywords"
		}
		return r
	}
	semantic := false
	for _, b := range blocks {
		if b.l1 && s.provider.Semantic() {
			semantic = true
		}
	}
	p := blocks[0]
	sp := support(l, q, *p.EvidenceBlock)
	r := judgement{Relevance: lookup.Relevance{SemanticSupport: semantic, Coverage: round4(sp.Share()), Basis: lookup.BasisLexical},
		signals: Signals{Support: sp, FrontWeight: p.l0Weight}, views: views, primaryDoc: p.DocumentID, lang: l.Language}
	switch {
	case views.of(semanticSearch).present && views.of(lexicalSearch).present:
		r.Basis = lookup.BasisBoth
	case views.of(semanticSearch).present:
		r.Basis = lookup.BasisSemantic // no section holds a word of the question
	}
	if sp.Words < minInformativeWords {
		return s.weak(r, l, views, blocks, "the question has "+strconv.Itoa(sp.Words)+" informative word(s), too few to ground an answer")
	}
	basis := basisOf(views, l1)
	lex := s.lexicalEvidence(l, q, p, sp)
	r.signals.Procedure, r.signals.Points, r.signals.Uncovered = lex.proc, lex.points, lex.uncovered
	scale, scaled := s.scaleOf(p.Score.Kind)
	switch {
	case p.l1 && s.provider.Semantic() && scaled && scale.Grounded > 0:
		if lex.uncovered.Term != "" && !lex.short {
			return s.weak(r, l, views, blocks, lex.why+"; "+basis)
		}
		reason, ok := semanticVerdict(p, scale, lex)
		if !ok {
			return s.weak(r, l, views, blocks, reason)
		}
		r.Reason = reason
	case !lex.strong:
		return s.weak(r, l, views, blocks, lex.why+"; "+basis)
	default:
		r.Reason = lex.why
		// A semantic provider that is down or found nothing has not spoken, and every grounded
		// verdict with it needs its support: lexical evidence alone is never more lenient than
		// the combined verdict, so it is returned as the closest procedures, not as grounded.
		if s.provider.Semantic() && (l1.Status == lookup.L1Failed || l1.Status == lookup.L1Unavailable || l1.Status == lookup.L1Empty) {
			if why, ok := s.weigh(p.DocumentID, views); !ok {
				r.Reason += ", but " + why
			}
			return s.weak(r, l, views, blocks, "degraded: "+r.Reason+"; a grounded answer needs the semantic search, which "+degradedWhy(l1.Status)+"; "+basis)
		}
	}
	r.signals.Base = true
	if why, ok := s.weigh(p.DocumentID, views); !ok {
		return s.weak(r, l, views, blocks, r.Reason+", but "+why+"; "+basis)
	} else if why != "" {
		r.Reason += "; " + why
	}
	r.Assessment = lookup.AssessmentStrong
	r.Reason += "; " + basis
	return r
}

// weak is r judged weak for why: the closest procedures are returned, with the alternatives
// the evidence paths favour over the primary block's when the procedures cover the question
// (covered), and none when they do not: there is then nothing for an operator to choose between.
func (s *Service) weak(r judgement, l *lexical.Lang, views *pathViews, blocks []ranked, why string) judgement {
	r.Assessment = lookup.AssessmentWeak
	r.Reason = why + "; the closest procedures are returned and no procedure is inferred"
	if r.covered = s.covered(r, views); r.covered {
		r.Alternatives = s.alternatives(l, blocks[0].DocumentID, views, blocks)
	}
	return r
}

// basisOf says which evidence a verdict stands on.
func basisOf(views *pathViews, l1 lookup.L1Details) string {
	switch {
	case views.of(semanticSearch).present:
		return "semantic and lexical evidence"
	case l1.Status == lookup.L1Failed || l1.Status == lookup.L1Unavailable:
		return "L0 keyword and lexical evidence only: L1 retrieval " + string(l1.Status)
	case l1.Status == lookup.L1Empty:
		return "L0 keyword and lexical evidence only: L1 returned no candidates"
	case l1.Status == lookup.L1Disabled:
		return "L0 keyword evidence only: L1 is disabled"
	}
	return "lexical evidence (keywords and BM25), no semantic support"
}

// semanticVerdict judges a semantic primary block on its score's scale: the reason it is
// grounded, or (false) why it is not.
func semanticVerdict(p ranked, scale ScoreScale, lex lexicalJudgement) (string, bool) {
	switch {
	case p.Score.Value >= scale.Grounded:
		return "the semantic search scores the primary block " + fixed(p.Score.Value, 2) + " (" + p.Score.Kind +
			"), at or above the grounded threshold " + fixed(scale.Grounded, 2), true
	case p.Score.Value >= scale.Supported && lex.strong:
		return "the semantic search scores the primary block " + fixed(p.Score.Value, 2) + " (" + p.Score.Kind +
			"), at or above " + fixed(scale.Supported, 2) + ", and " + lex.why, true
	}
	needs := fixed(scale.Grounded, 2)
	if scale.Supported < scale.Grounded {
		needs += ", or " + fixed(scale.Supported, 2) + " with strong lexical evidence"
	}
	return "the semantic search scores the best block only " + fixed(p.Score.Value, 2) + " (" + p.Score.Kind +
		"); grounded needs " + needs, false
}

// degradedWhy says why the semantic search could not support a verdict.
func degradedWhy(status lookup.L1Status) string {
	if status == lookup.L1Empty {
		return "returned no candidates"
	}
	return "is " + string(status)
}

// lexicalJudgement is the lexical evidence rule's outcome for the primary block.
type lexicalJudgement struct {
	strong bool
	// short tells that the points are below the language's minimum (and the question not
	// explained whole by its primary block).
	short     bool
	why       string
	proc      judge.Support
	points    float64
	uncovered judge.Uncovered
}

// lexicalEvidence applies the lexical evidence rule to the primary block p, whose own support is sp.
func (s *Service) lexicalEvidence(l *lexical.Lang, q *question, p ranked, sp judge.Support) lexicalJudgement {
	proc := sp
	di := l.DocIndex(p.DocumentID)
	if di >= 0 {
		proc = judge.DocSupport(l, q.resolved, di)
	}
	j := lexicalJudgement{proc: proc, points: proc.Weight + p.l0Weight + LexicalWordPoints*float64(proc.Matched)}
	minPoints := LexicalMinPoints(l.Language)
	// A short question every informative word of which the primary block holds, and that names
	// its procedure's subject in the front matter's terms, is explained whole, though it is too
	// short to reach a longer question's points ("Ozonbehandlung wann nötig", "who is on-call duty
	// manager, when to call").
	whole := sp.Matched == sp.Words && p.l0Weight >= WholeQuestionFrontWeight
	switch {
	case sp.Matched == 0:
		j.why = "the best block holds none of the question's " + wordsOf(sp)
		return j
	}
	// A question about a topic no procedure covers (a tariff, the fleet's insurance premium)
	// shares many words with some procedure; only the topic's own term tells. It is told for
	// evidence too weak to ground as well, when the evidence would otherwise cover the question
	// or ground a confirmed procedure: such a question is offered no clarification (covered).
	j.short = j.points < minPoints && !whole
	if di >= 0 && (!j.short || lexicallyClarifiable(proc, j.points, l.Language)) {
		if u, ok := judge.UncoveredTopic(l, q.tokens, q.stems, q.words, di); ok {
			j.uncovered = u
			j.why = "the question names " + strconv.Quote(u.Term) + " (" + u.Topic +
				"), a topic the procedures do not cover, and the closest procedure never uses the term"
			return j
		}
	}
	if j.short {
		j.why = "the closest procedure holds " + strconv.Itoa(proc.Matched) + " of the question's " + wordsOf(sp) +
			" (evidence " + below(j.points, minPoints) + ", grounded needs " + fixed(minPoints, 1) + ")"
		return j
	}
	j.strong = true
	if j.points < minPoints {
		j.why = "the primary block holds every one of the question's " + strconv.Itoa(sp.Words) +
			" informative words and the procedure's front matter names its subject (L0 weight " + fixed(p.l0Weight, 1) +
			", at least " + fixed(WholeQuestionFrontWeight, 1) + "; evidence " + fixed(j.points, 1) + ", below the " +
			fixed(minPoints, 1) + " a longer question needs)"
		return j
	}
	// Written into one buffer: the figures' texts would be an allocation each.
	var buf [160]byte
	b := append(buf[:0], "the procedure holds "...)
	b = strconv.AppendInt(b, int64(proc.Matched), 10)
	b = append(b, " of the question's "...)
	b = strconv.AppendInt(b, int64(sp.Words), 10)
	b = append(b, " informative words, the primary block "...)
	b = strconv.AppendInt(b, int64(sp.Matched), 10)
	b = append(b, " of them (evidence "...)
	b = strconv.AppendFloat(b, j.points, 'f', 1, 64)
	b = append(b, ", threshold "...)
	b = strconv.AppendFloat(b, minPoints, 'f', 1, 64)
	j.why = string(append(b, ')'))
	return j
}

// wordsOf says how many informative words the question has, and how many of them no procedure
// uses: coverage counts only the others, the words the procedures know.
func wordsOf(sp judge.Support) string {
	s := strconv.Itoa(sp.Words) + " informative words"
	if sp.Unknown > 0 && sp.Unknown < sp.Words {
		s += ", " + strconv.Itoa(sp.Unknown) + " of them used by no procedure"
	}
	return s
}

// below formats evidence x that falls short of threshold t with one decimal, or two where one
// would round it up to t's own figure ("14.46", never "14.5" below 14.5).
func below(x, t float64) string {
	if s := fixed(x, 1); s != fixed(t, 1) {
		return s
	}
	return fixed(x, 2)
}

// fixed formats x with prec decimals, as %.<prec>f does. assess builds its reasons by
// concatenation, not fmt.Sprintf: a lookup makes one, and Sprintf's formatting cost about 4,600
// instructions of a 180,000-instruction lookup (callgrind, BenchmarkLookup/en).
func fixed(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }
