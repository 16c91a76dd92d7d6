package eval

import (
	"context"
	"hash/fnv"
	"math"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// Scripted is a stand-in for RAGcore's semantic search over the evaluation questions, written to
// the rankings a good embedding search gives (the RAGcore contract's retrieve and answer, in
// process): for an answerable question the section holding its deciding fact scores about 0.8;
// the sections a lexical search confuses it with are distractors scoring at most 0.7, some
// returned as several chunks; questions no procedure answers score below 0.5 everywhere; a
// category filter is honoured, so a wrong filter hides the answer. Scores are deterministic
// (derived from the question id). A question it was not scripted for gets low scores only.
type Scripted struct {
	platform
	ix *lexical.Index
	qs map[string]Question // by language and question text
}

var (
	_ port.Retriever      = (*Scripted)(nil)
	_ port.Answerer       = (*Scripted)(nil)
	_ port.ManifestSyncer = (*Scripted)(nil)
	_ port.HealthChecker  = (*Scripted)(nil)
	_ port.ManifestSyncer = platform{}
	_ port.HealthChecker  = platform{}
)

// NewScripted scripts rankings for the questions over the analysed corpus.
func NewScripted(ix *lexical.Index, qs []Question) *Scripted {
	s := &Scripted{ix: ix, qs: map[string]Question{}}
	for _, q := range qs {
		s.qs[q.Question] = q
	}
	return s
}

// platform is what the stand-ins share of RAGcore: its name, its score kind, a health that is
// always ok and a manifest sync that does nothing.
type platform struct{}

// Name implements port.Named.
func (platform) Name() string { return "ragcore" }

// Semantic implements port.Retriever.
func (platform) Semantic() bool { return true }

// ScoreKind implements port.Retriever.
func (platform) ScoreKind() string { return "cosine_similarity" }

// Health implements port.HealthChecker.
func (platform) Health(context.Context, port.Call) port.Health {
	return port.Health{Status: domain.HealthOK}
}

// SyncManifest implements port.ManifestSyncer.
func (platform) SyncManifest(context.Context, port.Call, []port.DocumentRef) (port.SyncResult, error) {
	return port.SyncResult{}, nil
}

// Retrieve implements port.Retriever.
func (s *Scripted) Retrieve(ctx context.Context, q port.Query) ([]port.Candidate, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l := s.ix.Lang(q.Language)
	if l == nil {
		return nil, domain.ErrUnsupportedLanguage
	}
	eq, known := s.qs[q.Question]
	rnd := newRand(q.Question)
	var out []port.Candidate
	add := func(passage int, score float64, chunks int) {
		d, sec := l.Doc(passage)
		if q.Category != "" && d.Category != q.Category {
			return
		}
		parts := chunk(sec.Content, chunks)
		for i, part := range parts {
			out = append(out, port.Candidate{
				DocumentID: d.ID, Version: d.Version, EffectiveDate: d.EffectiveDate, Title: d.Title,
				Section: sec.Heading, Anchor: sec.Anchor, Category: d.Category, Source: d.Source(sec),
				Content: part, Score: round4(score - 0.03*float64(i)*rnd.next()),
			})
		}
	}
	answer := -1
	if known && eq.Kind == KindAnswerable && eq.Language == q.Language {
		for pi := range l.Passages {
			if d, sec := l.Doc(pi); d.ID == eq.Expect && sec.Heading == eq.Section && l.Postings().InForce(pi) {
				answer = pi
			}
		}
	}
	// Distractors are the passages a lexical search ranks highest for the question: the ones
	// a semantic search must beat.
	hits := l.Search(l.Analyzer.Terms(q.Question), "", 12)
	top := 0.70
	if answer < 0 {
		top = 0.48
	}
	n := 0
	for _, h := range hits {
		if h.Passage == answer {
			continue
		}
		score := top - 0.025*float64(n) - 0.02*rnd.next()
		chunks := 1
		if rnd.next() < 0.35 {
			chunks = 2 + int(rnd.next()*2)
		}
		add(h.Passage, math.Max(score, 0.2), chunks)
		n++
		if n == 8 {
			break
		}
	}
	if answer >= 0 {
		chunks := 1
		if rnd.next() < 0.3 {
			chunks = 2
		}
		add(answer, 0.76+0.08*rnd.next(), chunks)
	}
	return rankTop(out, q.TopK), nil
}

// Ask implements port.Answerer as RAGcore's answer endpoint would: citations of its
// three best sections, grounded when the best scores at least 0.6.
func (s *Scripted) Ask(ctx context.Context, q port.AskQuery) (port.GroundedAnswer, error) {
	return askOn(ctx, s, q, "scripted answer")
}

// rankTop orders candidates best first, keeps the first topK and numbers their ranks.
func rankTop(out []port.Candidate, topK int) []port.Candidate {
	sortByScore(out)
	if len(out) > topK {
		out = out[:topK]
	}
	for i := range out {
		out[i].Rank = i + 1
	}
	return out
}

// askOn is RAGcore's answer endpoint over a stand-in's retrieval: its ten best candidates for
// the question, answered by answerFrom with the answer text.
func askOn(ctx context.Context, r port.Retriever, q port.AskQuery, text string) (port.GroundedAnswer, error) {
	cands, err := r.Retrieve(ctx, port.Query{Question: q.Question, Language: q.Language, TopK: 10, Category: q.Category})
	if err != nil {
		return port.GroundedAnswer{}, err
	}
	return answerFrom(cands, text), nil
}

// answerFrom is RAGcore's answer on candidates ranked best first: grounded when the best scores
// at least 0.6, citing the three best distinct sections.
func answerFrom(cands []port.Candidate, text string) port.GroundedAnswer {
	ga := port.GroundedAnswer{Answer: text, EvidenceState: port.StateInsufficient, Generated: true}
	if len(cands) > 0 && cands[0].Score >= 0.6 {
		ga.EvidenceState = port.StateGrounded
	}
	seen := map[string]bool{}
	for _, c := range cands {
		if seen[c.Source] || len(ga.Sources) == 3 {
			continue
		}
		seen[c.Source] = true
		ga.Sources = append(ga.Sources, port.AnswerSource{DocumentID: c.DocumentID, Title: c.Title, Version: c.Version,
			Section: c.Section, Excerpt: c.Content})
	}
	return ga
}

// chunk cuts content into n parts at line breaks, as a chunking platform would.
func chunk(content string, n int) []string {
	if n <= 1 {
		return []string{content}
	}
	lines := strings.SplitAfter(content, "\n")
	if len(lines) < n {
		return []string{content}
	}
	var out []string
	per := (len(lines) + n - 1) / n
	for i := 0; i < len(lines); i += per {
		out = append(out, strings.Join(lines[i:min(i+per, len(lines))], ""))
	}
	return out
}

func sortByScore(cs []port.Candidate) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].Score > cs[j-1].Score; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }

// rnd is a small deterministic generator seeded by the question, so that every run scores the
// same question the same way.
type rnd struct{ state uint64 }

func newRand(seed string) *rnd {
	h := fnv.New64a()
	h.Write([]byte(seed))
	return &rnd{state: h.Sum64() | 1}
}

// next returns a number in [0, 1).
func (r *rnd) next() float64 {
	r.state ^= r.state << 13
	r.state ^= r.state >> 7
	r.state ^= r.state << 17
	return float64(r.state>>11) / float64(1<<53)
}
