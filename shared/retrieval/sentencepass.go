package retrieval

import (
	"context"
	"errors"
	"slices"
	"strings"

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
// the whole question's words mix both needs so that no procedure holds a part the others lack;
// an agent's paraphrase joins the two in one sentence ("… on the same trip — how many photos for
// the bump, and what do we charge on top of the fine?"). The sentence pass asks each part of such
// a question alone (its sentences, cut where a sentence joins two needs), on lexical evidence (L0
// and the lexical search, judged as the demo provider's lookups are: no RAGcore call), and a part
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

// sentenceComplements adds to parts, up to maxComplements, the procedures that a part of the
// question, asked alone on lexical evidence, is grounded on, other than the primary block's and
// those already found. The parts are its sentences, each cut further where a sentence joins two
// needs (segments: "a shunt at a junction and a speed camera on the same trip — how many photos
// for the bump, and what do we charge on top of the fine?"), and the pass reads a question only
// when two of them hold MinPartWords specific words each: a situation told at length, its other
// parts without words of their own ("what now?"), makes none. A lookup confined to a confirmed
// procedure makes none either: its blocks lead with the confirmed procedure's sections, and it
// names the question's other parts from its unconfined local pass (confinement.others).
func (s *Service) sentenceComplements(ctx context.Context, c *lookupCall, blocks []ranked, parts []part) []part {
	if c.conf.on() || len(blocks) == 0 || len(parts) == maxComplements ||
		specificCount(c.q.resolved, wordsMask(c.q.resolved)) < 2*MinPartWords {
		return parts // too few specific words for two needs
	}
	var segBuf [maxSentences]segment
	segs := segments(c.q.text, segBuf[:0])
	if len(segs) < 2 {
		return parts
	}
	var maskBuf [maxSentences]uint64
	masks, needs := segmentMasks(c.l, c.q, segs, maskBuf[:0])
	if needs < 2 {
		return parts
	}
	ctx, end := span.Start(ctx, "sentences")
	defer end()
	ctx = span.With(ctx, nil) // each part's verdict is a step of this one, not steps of its own
	primary := c.l.DocIndex(blocks[0].DocumentID)
	local := s.sentencePass(c.l)
	for i, seg := range segs {
		if specificCount(c.q.resolved, masks[i]) < MinPartWords {
			continue
		}
		if p, ok := local.sentencePart(ctx, c, c.q.text[seg.from:seg.to], masks[i], primary, parts); ok {
			parts = append(parts, p)
			if len(parts) == maxComplements {
				break
			}
		}
	}
	return parts
}

// sentencePass is the service that judges a part of a question alone: this one's options and
// paths, the lexical search of l as its L1, no metrics.
func (s *Service) sentencePass(l *lexical.Lang) *Service {
	opts := s.opts
	opts.L1Enabled, opts.Metrics = true, nil
	return &Service{epochs: s.epochs, loc: s.loc, upcomingDays: s.upcomingDays, provider: sentenceSearch{l: l},
		paths: s.paths, opts: opts, log: s.log, now: s.now}
}

// sentencePart judges a part of the question (sentence) alone and, when it is grounded on a
// procedure other than the primary's and than the parts', returns that procedure as a part: the
// question's words of the sentence (mask) that its grounded block holds, that block its best
// section.
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

// sentenceVerdict is the lexical verdict of a part looked up alone (c): L0, the lexical search
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

// segmentMasks appends to out the mask of q's words in each of segs, and counts the parts that
// hold MinPartWords specific words: a whole sentence's mask from q's own tokens, a part of a
// sentence's from its tokens read again.
func segmentMasks(l *lexical.Lang, q *question, segs []segment, out []uint64) ([]uint64, int) {
	var buf [maskWords]string
	terms := resolvedTerms(q, buf[:0])
	needs := 0
	var stems []string
	for _, seg := range segs {
		var m uint64
		if seg.whole && seg.sentence < len(q.ends) {
			start := 0
			if seg.sentence > 0 {
				start = q.ends[seg.sentence-1]
			}
			m = stemsMask(terms, q.stems[start:q.ends[seg.sentence]])
		} else {
			stems = stems[:0]
			for _, tok := range l.Analyzer.Tokens(q.text[seg.from:seg.to]) {
				stems = append(stems, l.Analyzer.Stem(tok))
			}
			m = stemsMask(terms, stems)
		}
		if specificCount(q.resolved, m) >= MinPartWords {
			needs++
		}
		out = append(out, m)
	}
	return out, needs
}

// segment is a part of a question: its byte range, its sentence's index and whether it is the
// whole sentence.
type segment struct {
	from, to, sentence int
	whole              bool
}

// needJoins are the marks at which a sentence joins two needs: a dash, a semicolon or a colon
// between them, or a comma before a word that adds the second ("and", "also", "plus", "und",
// "außerdem", "sowie"). Each begins with a space, a semicolon, a colon or a comma.
var needJoins = []string{" — ", " – ", " - ", " plus ", " sowie ", "; ", ": ", ", and ", ", also ", ", plus ", ", und ", ", außerdem ", ", sowie "}

// segments appends to out the parts of text, at most maxSentences: its sentences
// (textproc.WholeSentences), each cut after each of needJoins, the mark left with the part before
// it.
func segments(text string, out []segment) []segment {
	n := 0
	for start, end := range textproc.WholeSentences(text) {
		from, first := start, len(out)
		for i := start; i < end && len(out) < maxSentences-1; i++ {
			if c := text[i]; c != ' ' && c != ';' && c != ':' && c != ',' {
				continue
			}
			if k := joinAt(text[i:end]); k > 0 {
				out = append(out, segment{from: from, to: i + k, sentence: n})
				from, i = i+k, i+k-1
			}
		}
		if len(out) == maxSentences {
			break
		}
		out = append(out, segment{from: from, to: end, sentence: n, whole: len(out) == first})
		n++
	}
	return out
}

// joinAt is the length of the mark of needJoins s begins with, 0 for none.
func joinAt(s string) int {
	for _, j := range needJoins {
		if strings.HasPrefix(s, j) {
			return len(j)
		}
	}
	return 0
}
