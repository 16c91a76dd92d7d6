package ragcorefake

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
)

// vector is a bag of lower-cased words with its Euclidean norm. Cosine similarity of word counts
// is crude next to RAGcore's embeddings, but it is deterministic and has the same range and
// meaning ("cosine_similarity"), which is all a client may rely on.
type vector struct {
	counts map[string]float64
	norm   float64
}

func newVector(text string) vector {
	counts := map[string]float64{}
	for _, w := range words(text) {
		counts[w]++
	}
	var sum float64
	for _, c := range counts {
		sum += c * c
	}
	return vector{counts: counts, norm: math.Sqrt(sum)}
}

// words splits text into lower-cased runs of Unicode letters and digits.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func cosine(a, b vector) float64 {
	if a.norm == 0 || b.norm == 0 {
		return 0
	}
	if len(b.counts) < len(a.counts) {
		a, b = b, a
	}
	var dot float64
	for w, c := range a.counts {
		dot += c * b.counts[w]
	}
	return dot / (a.norm * b.norm)
}

// hit is one scored passage.
type hit struct {
	p     indexedPassage
	score float64 // rounded to four decimals, as the client sees it
	rank  int
}

// query is what retrieve and answer search with; the namespace is always the server's, because
// the request headers were checked against it.
type query struct {
	collection, text, language, category string
	topK                                 int
}

// searchLocked returns the topK passages of the server's namespace, q's collection and language
// (and category when set) with a positive score, best first.
func (s *Server) searchLocked(q query) []hit {
	qv := newVector(q.text)
	var hits []hit
	for _, p := range s.passages {
		if p.Tenant != s.opts.Tenant || p.Workspace != s.opts.Workspace ||
			p.Collection != q.collection || p.Language != q.language ||
			(q.category != "" && p.Category != q.category) {
			continue
		}
		score := math.Round(cosine(qv, p.vec)*1e4) / 1e4
		if score > 0 {
			hits = append(hits, hit{p: p, score: score})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		return cmp.Or(
			cmp.Compare(b.score, a.score),
			strings.Compare(a.p.SourceID, b.p.SourceID),
			strings.Compare(a.p.ExternalID, b.p.ExternalID),
			strings.Compare(a.p.Section, b.p.Section),
			strings.Compare(a.p.DocumentID, b.p.DocumentID),
		)
	})
	if len(hits) > q.topK {
		hits = hits[:q.topK]
	}
	for i := range hits {
		hits[i].rank = i + 1
	}
	return hits
}
