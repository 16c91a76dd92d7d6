package eval

import (
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// Realistic is a stand-in for RAGcore's semantic search that errs as an embedding search does on
// chatty operator questions, beside Scripted, which never errs. Its scores sit close together and
// say nothing about which section answers: a verdict that reads the answer off the score fails
// on it as it would on a real platform.
//
// For an answerable question of its sets (asked in the set's language), it ranks up to eight
// sections of the question's language:
//   - the answering section A (the question's section);
//   - the neighbour N: the section a BM25 search of the question ranks highest among the other
//     procedures' sections, the procedure that shares most of the question's words;
//   - the own section S: the section of A's procedure other than A that BM25 ranks highest
//     (the next section of the procedure when BM25 finds none);
//   - then the rest of BM25's ranking.
//
// A draw from the question's text places A: first for 2/3 of the questions (N, S and the rest
// behind it), otherwise, 1/12 each, behind N, behind S, fourth (behind N, S and BM25's next), or
// missing (N first); a placement the corpus cannot give (no section of another procedure shares
// a word with the question) falls back to first. The first section scores 0.75–0.80, each of the next three 0.004–0.016 less
// than the one before it and each further one 0.005–0.02 less: wherever A stands among the first
// four it scores 0.70–0.80, within 0.05 of the sections around it, and its score is drawn as
// theirs are, so no score separates it from them.
//
// A question no section answers gets BM25's closest sections, padded to eight with sections
// drawn at random. Near-domain questions (fleet-sounding, no procedure answers them) score like
// weak answers: the first 0.615–0.67, each next one 0.002–0.007 less (all at least 0.55).
// Off-topic questions score low: the first 0.45–0.55, each next one 0.004–0.012 less (all above
// 0.35). A question it was not given, or asked in another language than its set's, is scored as
// near-domain when BM25 finds any section for it and as off-topic otherwise.
//
// Each section is, with probability 0.3, returned as 2 or 3 chunks of about equal length cut at
// line breaks and sentence ends (a section of fewer sentences comes whole), the k-th chunk
// scoring k × (0.001–0.005) below the first. A category filter drops the sections of other
// categories after scoring and leaves the others' scores as they are, so a wrong filter hides the
// answer. Every draw comes from a generator seeded by the question's text, in an order that does
// not depend on the filter or on top-k: the same question gets the same scores on every call.
//
// Ask is RAGcore's answer endpoint on top of that ranking, as naive as a real platform's: it
// retrieves ten candidates, is grounded when the best scores at least 0.6 and cites the three best
// distinct sections.
type Realistic struct {
	platform
	ix *lexical.Index
	qs map[string]Question // by question text
}

var (
	_ port.Retriever      = (*Realistic)(nil)
	_ port.Answerer       = (*Realistic)(nil)
	_ port.ManifestSyncer = (*Realistic)(nil)
	_ port.HealthChecker  = (*Realistic)(nil)
)

// NewRealistic ranks the questions' sections over the analysed corpus.
func NewRealistic(ix *lexical.Index, qs []Question) *Realistic {
	s := &Realistic{ix: ix, qs: map[string]Question{}}
	for _, q := range qs {
		s.qs[q.Question] = q
	}
	return s
}

// placement is where a ranking puts the answering section.
type placement int

const (
	placedFirst placement = iota
	behindNeighbour
	behindOwnSection
	placedFourth
	answerMissing
	notAnswerable // a near-domain, off-topic or unknown question
)

// rankedSection is one section of a ranking: its passage, its score (its first chunk's), and
// how many chunks it comes back as, each step below the one before.
type rankedSection struct {
	passage int
	score   float64
	chunks  int
	step    float64
}

// ranking is what Realistic returns for a question before a filter and top-k apply.
type ranking struct {
	sections []rankedSection
	answer   int // the answering passage, -1 for a question no section answers
	placed   placement
}

// Score bands of a ranking: the first section's score and the steps down.
type band struct {
	topLo, topHi   float64
	nearLo, nearHi float64 // the steps down to the fourth section
	farLo, farHi   float64 // the steps after it
}

var (
	answerableBand = band{topLo: 0.75, topHi: 0.80, nearLo: 0.004, nearHi: 0.016, farLo: 0.005, farHi: 0.02}
	nearDomainBand = band{topLo: 0.615, topHi: 0.67, nearLo: 0.002, nearHi: 0.007, farLo: 0.002, farHi: 0.007}
	offTopicBand   = band{topLo: 0.45, topHi: 0.55, nearLo: 0.004, nearHi: 0.012, farLo: 0.004, farHi: 0.012}
)

// rankedSections is how many sections a ranking holds at most.
const rankedSections = 8

// rank builds the question's ranking in language l.
func (s *Realistic) rank(l *lexical.Lang, question, lang string) ranking {
	rnd := newRand(question)
	// The draws come first, in a fixed order, so that nothing below changes them.
	u := rnd.next()
	top := rnd.next()
	type draw struct{ gap, chunk, chunks, step float64 }
	var draws [rankedSections]draw
	for i := range draws {
		draws[i] = draw{rnd.next(), rnd.next(), rnd.next(), rnd.next()}
	}

	hits := l.Search(l.Analyzer.Terms(question), "", 2*rankedSections)
	r := ranking{answer: -1, placed: notAnswerable}
	eq, known := s.qs[question]
	if known && eq.Kind == KindAnswerable && eq.Language == lang {
		r.answer = passageOf(l, eq.Expect, eq.Section)
	}
	var order []int
	b := nearDomainBand
	if r.answer >= 0 {
		b = answerableBand
		order = s.placeAnswer(l, &r, hits, u)
	} else {
		switch {
		case known && eq.Kind == KindOffTopic:
			b = offTopicBand
		case known && eq.Kind == KindNearDomain:
		case len(hits) == 0:
			b = offTopicBand
		}
		for _, h := range hits {
			order = append(order, h.Passage)
		}
		// Passages not in force (a day's view) are drawn and left, within a bounded number of draws.
		want := min(rankedSections, len(l.Passages))
		for draws := 0; len(order) < want && draws < 64*want; draws++ {
			if p := int(rnd.next() * float64(len(l.Passages))); l.Postings().InForce(p) && !slices.Contains(order, p) {
				order = append(order, p)
			}
		}
	}
	score := b.topLo + (b.topHi-b.topLo)*top
	for i, p := range order[:min(len(order), rankedSections)] {
		d := draws[i]
		if i > 0 {
			lo, hi := b.farLo, b.farHi
			if i < 4 {
				lo, hi = b.nearLo, b.nearHi
			}
			score -= lo + (hi-lo)*d.gap
		}
		chunks := 1
		if d.chunk < 0.3 {
			chunks = 2 + int(2*d.chunks)
		}
		r.sections = append(r.sections, rankedSection{passage: p, score: score, chunks: chunks, step: 0.001 + 0.004*d.step})
	}
	return r
}

// placeAnswer orders the sections of an answerable question's ranking by the placement u draws.
func (s *Realistic) placeAnswer(l *lexical.Lang, r *ranking, hits []lexical.Hit, u float64) []int {
	a := r.answer
	aDoc := l.Passages[a].Doc
	neighbour, own := -1, -1
	var rest []int
	for _, h := range hits {
		switch {
		case h.Passage == a:
		case neighbour < 0 && l.Passages[h.Passage].Doc != aDoc:
			neighbour = h.Passage
		case own < 0 && l.Passages[h.Passage].Doc == aDoc:
			own = h.Passage
		default:
			rest = append(rest, h.Passage)
		}
	}
	if own < 0 {
		// BM25 found no other section of the procedure: the next one (or the one before).
		switch {
		case a+1 < len(l.Passages) && l.Passages[a+1].Doc == aDoc:
			own = a + 1
		case a > 0 && l.Passages[a-1].Doc == aDoc:
			own = a - 1
		}
	}
	// The competitors in order: the neighbour, the own section, then BM25's ranking.
	var others []int
	for _, p := range append([]int{neighbour, own}, rest...) {
		if p >= 0 {
			others = append(others, p)
		}
	}
	switch {
	case u < 2.0/3:
		r.placed = placedFirst
	case u < 2.0/3+1.0/12:
		r.placed = behindNeighbour
	case u < 2.0/3+2.0/12:
		r.placed = behindOwnSection
	case u < 2.0/3+3.0/12:
		r.placed = placedFourth
	default:
		r.placed = answerMissing
	}
	// A placement the corpus cannot give (no neighbour, no other section) falls back to first.
	if (r.placed == behindNeighbour && neighbour < 0) || (r.placed == behindOwnSection && own < 0) ||
		(r.placed == placedFourth && len(others) < 3) || (r.placed == answerMissing && len(others) == 0) {
		r.placed = placedFirst
	}
	switch r.placed {
	case behindNeighbour:
		return slices.Insert(slices.Clone(others), 1, a)
	case behindOwnSection:
		return append([]int{own, a}, slices.DeleteFunc(slices.Clone(others), func(p int) bool { return p == own })...)
	case placedFourth:
		return slices.Insert(slices.Clone(others), 3, a)
	case answerMissing:
		return others
	}
	return append([]int{a}, others...)
}

// passageOf returns the passage of the document's section with that heading, -1 when there is
// none.
func passageOf(l *lexical.Lang, docID, heading string) int {
	for pi := range l.Passages {
		if d, sec := l.Doc(pi); d.ID == docID && sec.Heading == heading && l.Postings().InForce(pi) {
			return pi
		}
	}
	return -1
}

// Retrieve implements port.Retriever.
func (s *Realistic) Retrieve(ctx context.Context, q port.Query) ([]port.Candidate, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l := s.ix.Lang(q.Language)
	if l == nil {
		return nil, domain.ErrUnsupportedLanguage
	}
	var out []port.Candidate
	for _, rs := range s.rank(l, q.Question, q.Language).sections {
		d, sec := l.Doc(rs.passage)
		if q.Category != "" && d.Category != q.Category {
			continue
		}
		for i, part := range chunkText(sec.Content, rs.chunks) {
			out = append(out, port.Candidate{
				DocumentID: d.ID, Version: d.Version, EffectiveDate: d.EffectiveDate, Title: d.Title,
				Section: sec.Heading, Anchor: sec.Anchor, Category: d.Category, Source: d.Source(sec),
				Content: part, Score: round4(rs.score - float64(i)*rs.step),
			})
		}
	}
	return rankTop(out, q.TopK), nil
}

// Ask implements port.Answerer as RAGcore's answer endpoint would on top of Retrieve.
func (s *Realistic) Ask(ctx context.Context, q port.AskQuery) (port.GroundedAnswer, error) {
	return askOn(ctx, s, q, "realistic answer")
}

// chunkText cuts content into n parts of about equal length at line breaks and sentence ends, as
// a chunking platform would; content of fewer than n sentences comes whole. The parts joined are
// the content.
func chunkText(content string, n int) []string {
	var units []string
	start := 0
	for i := 0; i < len(content); i++ {
		if content[i] == '\n' || sentenceEnd(content, i) {
			units = append(units, content[start:i+1])
			start = i + 1
		}
	}
	if start < len(content) {
		units = append(units, content[start:])
	}
	if n <= 1 || len(units) < n {
		return []string{content}
	}
	var out []string
	var part strings.Builder
	left := len(content)
	for i, u := range units {
		part.WriteString(u)
		// Close the part once it holds its share of what is left, keeping a unit for each
		// part still to come.
		parts := n - len(out)
		if parts > 1 && part.Len() >= left/parts && len(units)-i-1 >= parts-1 {
			out = append(out, part.String())
			left -= part.Len()
			part.Reset()
		}
	}
	return append(out, part.String())
}

// sentenceEnd reports whether content[i] is the space after a sentence: ". ", "! " or "? "
// followed by a capital letter, the word before the stop a number or of at least four letters
// (not "ext. 4410", "z. B. Fahrzeug" or "bzw. Kunde").
func sentenceEnd(content string, i int) bool {
	if content[i] != ' ' || i < 2 || i+1 >= len(content) || !strings.ContainsRune(".!?", rune(content[i-1])) {
		return false
	}
	next, _ := utf8.DecodeRuneInString(content[i+1:])
	if !unicode.IsUpper(next) {
		return false
	}
	word := content[strings.LastIndexAny(content[:i-1], " \n(")+1 : i-1]
	if word == "" {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(word)
	return unicode.IsDigit(last) || (utf8.RuneCountInString(word) >= 4 && !strings.Contains(word, "."))
}
