package retrieval

import (
	"context"
	"errors"
	"slices"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/judge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/span"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// An operator's second need often reads, asked alone, as a question of its own that one procedure
// answers plainly ("Customer noticed a ripped seat before starting, when should she send the
// photos? She also found someone's wallet in the door pocket, what does she do with it?"), while
// the whole question's words mix both needs so that no procedure holds a part the others lack.
// The sentence pass asks each sentence of such a question alone, on lexical evidence (L0 and the
// lexical search, judged as the demo provider's lookups are: no RAGcore call), and a sentence
// grounded on another procedure than the primary's makes that procedure a complement, its
// grounded block the complement's best section.

// errNotAnswerer tells that the sentence pass's search answers no /ask.
var errNotAnswerer = errors.New("the sentence pass's lexical search answers no question")

// sentenceSearch is the lexical search of one language's sections as the sentence pass's L1: the
// focused search the demo provider makes, over the day's index the lookup reads.
type sentenceSearch struct{ l *lexical.Lang }

var (
	_ port.Retriever = sentenceSearch{}
	_ port.Answerer  = sentenceSearch{}
)

func (p sentenceSearch) Name() string      { return "sentence-pass" }
func (p sentenceSearch) Semantic() bool    { return false }
func (p sentenceSearch) ScoreKind() string { return bm25Kind }
func (p sentenceSearch) InProcess() any    { return p }

// Retrieve returns the focused lexical search's best sections for the query's terms.
func (p sentenceSearch) Retrieve(_ context.Context, q port.Query) ([]port.Candidate, error) {
	hits := judge.SearchFocused(p.l, q.Terms, q.TermWeights, q.Category, q.TopK, textproc.QuestionKinds(q.Question))
	return judge.Candidates(p.l, hits, q.Buffer[:0]), nil
}

// Ask is never called: the sentence pass looks up, it does not answer.
func (p sentenceSearch) Ask(context.Context, port.AskQuery) (port.GroundedAnswer, error) {
	return port.GroundedAnswer{}, errNotAnswerer
}

// sentenceComplements adds to parts, up to maxComplements, the procedures that a sentence of the
// question, asked alone on lexical evidence, is grounded on, other than the primary block's and
// those already found: for each sentence of a question whose sentences hold MinPartWords specific
// words each (sentenceMasks, which tells two needs from a situation told at length). A lookup
// confined to a confirmed procedure makes none: its blocks lead with the confirmed procedure's
// sections, and it names the question's other parts from its unconfined local pass
// (confinement.others).
func (s *Service) sentenceComplements(ctx context.Context, c *lookupCall, blocks []ranked, parts []part) []part {
	if c.conf.on() || len(blocks) == 0 || len(parts) == maxComplements {
		return parts
	}
	var buf [maxSentences]uint64
	if len(sentenceMasks(c.q, buf[:0])) == 0 {
		return parts
	}
	ctx, end := span.Start(ctx, "sentences")
	defer end()
	ctx = span.With(ctx, nil) // each sentence's verdict is a step of this one, not steps of its own
	primary := c.l.DocIndex(blocks[0].DocumentID)
	local := s.sentencePass(c.l)
	i := 0
	for start, end := range textproc.WholeSentences(c.q.text) {
		mask := sentenceMask(c.q, i)
		i++
		if specificCount(c.q.resolved, mask) < MinPartWords {
			continue
		}
		if p, ok := local.sentencePart(ctx, c, c.q.text[start:end], mask, primary, parts); ok {
			parts = append(parts, p)
			if len(parts) == maxComplements {
				break
			}
		}
	}
	return parts
}

// sentencePass is the service that judges a sentence alone: this one's options and paths, the
// lexical search of l as its L1, no metrics.
func (s *Service) sentencePass(l *lexical.Lang) *Service {
	opts := s.opts
	opts.L1Enabled, opts.Metrics = true, nil
	return &Service{epochs: s.epochs, loc: s.loc, upcomingDays: s.upcomingDays, provider: sentenceSearch{l: l},
		paths: s.paths, opts: opts, log: s.log, now: s.now}
}

// sentencePart judges the sentence alone and, when it is grounded on a procedure other than the
// primary's and than the parts', returns that procedure as a part: the question's words of the
// sentence that its grounded block holds, that block its best section.
func (s *Service) sentencePart(ctx context.Context, c *lookupCall, sentence string, mask uint64, primary int, parts []part) (part, bool) {
	sq := analyseQuestion(c.l, sentence)
	defer sq.release()
	sc := getL0Scratch()
	defer sc.release()
	req := lookup.LookupRequest{Question: sentence, Language: c.req.Language, TopK: c.req.TopK, Actor: c.req.Actor,
		CorrelationID: c.req.CorrelationID, AsOf: c.req.AsOf}
	call := &lookupCall{l: c.l, day: c.day, req: req, conf: confinement{doc: -1}, q: sq, sc: sc}
	passage, score, ok := s.sentenceVerdict(ctx, call)
	if !ok {
		return part{}, false
	}
	doc := int(c.l.Passages[passage].Doc)
	if doc == primary || slices.ContainsFunc(parts, func(p part) bool { return p.doc == doc }) {
		return part{}, false
	}
	held := judge.PassageHeld(c.l, c.q.resolved, passage) & mask
	if held == 0 {
		return part{}, false
	}
	_, weight := specific(c.q.resolved, held)
	return part{doc: doc, words: held, specific: weight, passage: passage, score: score, strong: true}, true
}

// sentenceVerdict is the lexical verdict of a sentence looked up alone (c): L0, the lexical search
// as L1, fusion and the paths' verdict, as a lookup makes them, and no more (no complements,
// alternatives' blocks or hit reasons): the index passage of its primary block and that block's
// score when it is grounded.
func (s *Service) sentenceVerdict(ctx context.Context, c *lookupCall) (passage int, score float64, grounded bool) {
	hints, matches := l0(c.l, c.q, c.req.TopK, c.sc)
	l1 := lookup.L1Details{Status: lookup.L1Disabled, Provider: s.provider.Name(), ScoreKind: s.provider.ScoreKind()}
	cands, _ := s.layerL1(ctx, c, hints, &l1)
	fused := lexical.Leading(matches)
	if len(cands) == 0 {
		fused = matches
	}
	blocks, _, fused0 := s.fuse(c.l, fused, cands, c.req.TopK, 0, c.sc.reasons)
	defer fused0.release()
	if len(blocks) == 0 {
		return 0, 0, false
	}
	views := s.views(ctx, c, cands, l1, matches[:min(len(matches), c.req.TopK)])
	defer views.release()
	if r := s.assess(c.l, c.q, blocks, l1, views); evidenceState(r.Relevance, len(blocks), l1.Status) != port.StateGrounded {
		return 0, 0, false
	}
	b := blocks[0]
	if b.local {
		return b.localPassage, b.Score.Value, true
	}
	passage, ok := c.l.PassageOf(b.DocumentID, anchorOf(b.Source))
	return passage, b.Score.Value, ok
}

// sentenceMask is the mask of q's words in its sentence i (q.ends), 0 past its last.
func sentenceMask(q *question, i int) uint64 {
	if i >= len(q.ends) {
		return 0
	}
	start := 0
	if i > 0 {
		start = q.ends[i-1]
	}
	var buf [maskWords]string
	return stemsMask(resolvedTerms(q, buf[:0]), q.stems[start:q.ends[i]])
}
