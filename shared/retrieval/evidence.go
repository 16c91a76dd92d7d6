package retrieval

import (
	"fmt"
	"math"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// Lexical evidence rule (the demo provider, and any lookup whose primary block has no semantic
// score): the primary block is strong when it holds at least LexicalMinWords of the question's
// informative words, whose IDF weight is at least LexicalMinWeight and at least LexicalMinShare
// of the weight of the question's words the corpus knows, and when it leads the best block of any
// other procedure by at least LexicalMinMargin of its weight. Words the corpus does not know
// (chat, typos, other subjects) do not dilute the share, so long questions are not penalised for
// their length; but they cannot make weak evidence strong either.
const (
	DefaultLexicalMinWords  = 2
	DefaultLexicalMinWeight = 4.0
	DefaultLexicalMinShare  = 0.2
	DefaultLexicalMinMargin = 0.15
)

// minInformativeWords is the fewest informative words a grounded question has: "e", "km" or
// stop words alone never ground an answer, whatever the provider's score.
const minInformativeWords = 2

// DefaultScoreScales are the score kinds the service knows. Cosine similarity is calibrated on the
// evaluation set of eval/ (see the README): an answering section scores about 0.8, a distractor
// 0.7 at most, a question no procedure answers below 0.5.
func DefaultScoreScales() map[string]ScoreScale {
	return map[string]ScoreScale{
		"cosine_similarity": {Clear: 0.05, Grounded: 0.65, Supported: 0.55},
		// BM25 scores of different sections are not calibrated against each other well enough
		// for one to overrule the fused ranks: no margin is clear.
		"bm25": {Clear: math.Inf(1), Relative: true},
	}
}

// judged is the lexical support of each block, kept beside the blocks for the assessment.
type judged struct {
	support []lexical.Support
}

// supports measures the lexical support of every block.
func supports(l *lexical.Lang, words []textproc.Group, blocks []EvidenceBlock) judged {
	j := judged{support: make([]lexical.Support, len(blocks))}
	for i, b := range blocks {
		if pi, ok := l.PassageOf(b.DocumentID, anchorOf(b.Source)); ok && !b.l1Chunk(l, pi) {
			j.support[i] = l.Support(words, pi)
			continue
		}
		// An L1 passage that is not one of the local copy's sections (another version, or a
		// chunk of one) is judged on its own text.
		j.support[i] = l.SupportText(words, b.Title+"\n"+b.Section+"\n"+b.Content, b.DocumentID)
	}
	return j
}

// l1Chunk reports whether the block's content is only part of the local section (a chunk).
func (b EvidenceBlock) l1Chunk(l *lexical.Lang, passage int) bool {
	_, sec := l.Doc(passage)
	return b.Content != sec.Content
}

// margin is how far the primary block's lexical weight leads the best block of another document,
// as a share of the primary's weight; 1 when no other document has a block.
func (j judged) margin(blocks []EvidenceBlock) float64 {
	p := j.support[0].Weight
	if p == 0 {
		return 0
	}
	var runner float64
	for i, b := range blocks[1:] {
		if b.DocumentID != blocks[0].DocumentID {
			runner = max(runner, j.support[i+1].Weight)
		}
	}
	return (p - runner) / p
}

// assess judges the evidence, by the evidence the primary block really has: a semantic score on
// its own scale when a semantic provider returned it, else the lexical support of the question's
// informative words. Semantic support is claimed only for candidates of a semantic provider that
// survived into the blocks.
func (s *Service) assess(l *lexical.Lang, words []textproc.Group, blocks []EvidenceBlock, l1 L1Details) Relevance {
	if len(blocks) == 0 {
		r := Relevance{Assessment: "none", Basis: "none", Reason: "no procedure matched the question"}
		if l1.Status == L1Failed || l1.Status == L1Unavailable {
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
	j := supports(l, words, blocks)
	sp := j.support[0]
	r := Relevance{SemanticSupport: semantic, Coverage: round4(sp.Share()), Basis: "lexical", signals: Signals{Support: sp, Margin: j.margin(blocks), FrontWeight: blocks[0].l0Weight}}
	p := blocks[0]
	scale, scaled := s.opts.ScoreScales[p.Score.Kind]
	weak := func(why string) Relevance {
		r.Assessment = "weak"
		r.Reason = why + "; the closest procedures are returned and no procedure is inferred"
		return r
	}
	if sp.Words < minInformativeWords {
		return weak(fmt.Sprintf("the question has %d informative word(s), too few to ground an answer", sp.Words))
	}
	if p.l1 && s.provider.Semantic() && scaled && scale.Grounded > 0 {
		r.Basis = "semantic"
		switch {
		case p.Score.Value >= scale.Grounded:
			r.Assessment = "strong"
			r.Reason = fmt.Sprintf("the semantic search scores the primary block %.2f (%s), at or above the grounded threshold %.2f",
				p.Score.Value, p.Score.Kind, scale.Grounded)
			return r
		case p.Score.Value >= scale.Supported && sp.Matched > 0:
			r.Assessment = "strong"
			r.Reason = fmt.Sprintf("the semantic search scores the primary block %.2f (%s), at or above %.2f, and the block holds %d of the question's informative words",
				p.Score.Value, p.Score.Kind, scale.Supported, sp.Matched)
			return r
		}
		return weak(fmt.Sprintf("the semantic search scores the best block only %.2f (%s); grounded needs %.2f, or %.2f with matching words",
			p.Score.Value, p.Score.Kind, scale.Grounded, scale.Supported))
	}
	basis := "lexical evidence (keywords and BM25), no semantic support"
	switch l1.Status {
	case L1Failed, L1Unavailable:
		basis = "L0 keyword evidence only: L1 retrieval " + l1.Status
	case L1Empty:
		basis = "L0 keyword evidence only: L1 returned no candidates"
	case L1Disabled:
		basis = "L0 keyword evidence only: L1 is disabled"
	}
	o := s.opts
	m := j.margin(blocks)
	switch {
	case sp.Matched < o.LexicalMinWords:
		return weak(fmt.Sprintf("the best block holds %d of the question's %d informative words; %s", sp.Matched, sp.Words, basis))
	case sp.Weight < o.LexicalMinWeight:
		return weak(fmt.Sprintf("the words the best block shares with the question are common ones (weight %.1f, needs %.1f); %s",
			sp.Weight, o.LexicalMinWeight, basis))
	case sp.Share() < o.LexicalMinShare:
		return weak(fmt.Sprintf("the best block holds only %.0f%% of the question's known words (needs %.0f%%); %s",
			100*sp.Share(), 100*o.LexicalMinShare, basis))
	case m < o.LexicalMinMargin:
		return weak(fmt.Sprintf("another procedure matches the question about as well (lead %.0f%%, needs %.0f%%); %s",
			100*m, 100*o.LexicalMinMargin, basis))
	}
	r.Assessment = "strong"
	r.Reason = fmt.Sprintf("the primary block holds %d of the question's %d informative words (%.0f%% of their weight) and leads the next procedure by %.0f%%; %s",
		sp.Matched, sp.Words, 100*sp.Share(), 100*m, basis)
	return r
}
