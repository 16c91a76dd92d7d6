package retrieval

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// fusing is an evidence block being assembled from L0 and L1 hits.
type fusing struct {
	block    EvidenceBlock
	fused    float64 // L1 score / best L1 score + L0Weight * L0 weight / question weight
	l0, l1   bool
	l0Weight float64
	l1Score  float64
	order    int // passage index: document id, then section order, for ties
}

// fuse merges L0 matches and L1 candidates into at most topK evidence blocks. Blocks with the
// same source identity (document, version, section anchor) become one block whose hit reasons
// are the union of both paths'. A block's fused score adds its L1 score relative to the best L1
// candidate (so any provider's score scale works) and its document's L0 weight relative to the
// question's whole weight (so a stray common word adds little); ties are broken by document id,
// then section order.
func (s *Service) fuse(l *lexical.Lang, query []string, matches []l0Match, cands []Candidate, topK int) []EvidenceBlock {
	byKey := map[string]*fusing{}
	var all []*fusing
	get := func(docID, version, anchor string) (*fusing, bool) {
		key := docID + "\x00" + version + "\x00" + anchor
		if f, ok := byKey[key]; ok {
			return f, true
		}
		f := &fusing{order: math.MaxInt}
		if p, ok := l.PassageOf(docID, anchor); ok {
			f.order = p
		}
		byKey[key] = f
		all = append(all, f)
		return f, false
	}
	var qWeight float64
	for _, t := range query {
		qWeight += l.IDF(t)
	}
	for _, m := range matches[:min(len(matches), topK)] {
		d, sec := l.Doc(m.passage)
		f, seen := get(d.ID, d.Version, sec.Anchor)
		if !seen {
			f.block = EvidenceBlock{
				Source: d.Source(sec), DocumentID: d.ID, Version: d.Version, EffectiveDate: d.EffectiveDate,
				Title: d.Title, Breadcrumb: d.Breadcrumb(sec), Section: sec.Heading, Category: d.Category,
				Content: sec.Content,
			}
		}
		f.l0, f.l0Weight = true, m.weight
		f.fused += s.opts.L0Weight * m.weight / qWeight
		f.block.HitReasons = unite(f.block.HitReasons, m.reasons...)
	}
	l1Reason := "l1:" + s.provider.ScoreKind()
	var best float64
	for _, c := range cands {
		best = max(best, c.Score)
	}
	for _, c := range cands {
		f, seen := get(c.DocumentID, c.Version, c.Anchor)
		if !seen {
			f.block = EvidenceBlock{
				Source: c.Source, DocumentID: c.DocumentID, Version: c.Version, EffectiveDate: c.EffectiveDate,
				Title: c.Title, Breadcrumb: breadcrumb(c.Title, c.Section), Section: c.Section,
				Category: c.Category, Content: c.Content,
			}
		}
		if !f.l1 || c.Score > f.l1Score {
			f.l1Score = c.Score
		}
		f.l1 = true
		if best > 0 {
			f.fused += c.Score / best
		}
		f.block.HitReasons = unite(f.block.HitReasons, l1Reason)
	}
	slices.SortStableFunc(all, func(a, b *fusing) int {
		if c := cmpDesc(a.fused, b.fused); c != 0 {
			return c
		}
		if c := strings.Compare(a.block.DocumentID, b.block.DocumentID); c != 0 {
			return c
		}
		return a.order - b.order
	})
	all = diversify(all, topK)
	out := make([]EvidenceBlock, 0, min(len(all), topK))
	for _, f := range all[:min(len(all), topK)] {
		b := f.block
		switch {
		case f.l0 && f.l1:
			b.RetrievalLayer = LayerBoth
		case f.l0:
			b.RetrievalLayer = LayerL0
		default:
			b.RetrievalLayer = LayerL1
		}
		if f.l1 {
			b.Score = Score{Value: round4(f.l1Score), Kind: s.provider.ScoreKind(), HigherIsBetter: true}
		} else {
			b.Score = Score{Value: round4(f.l0Weight), Kind: "l0_weight", HigherIsBetter: true}
		}
		b.Rank = len(out) + 1
		out = append(out, b)
	}
	return out
}

// sameDocDecay discounts each further block of a document already chosen, so that a second
// procedure that also matches is not crowded out of the first ranks by a third section of the
// first one. The best block of every document keeps its full score, so no document moves down.
const sameDocDecay = 0.5

// diversify picks up to topK blocks greedily by fused score, discounting a block by
// sameDocDecay for every block of its document picked before it. all is sorted by fused score.
func diversify(all []*fusing, topK int) []*fusing {
	out := make([]*fusing, 0, min(len(all), topK))
	picked := map[string]int{}
	left := slices.Clone(all)
	for len(out) < topK && len(left) > 0 {
		best, bestScore := 0, -1.0
		for i, f := range left {
			s := f.fused * math.Pow(sameDocDecay, float64(picked[f.block.DocumentID]))
			if s > bestScore {
				best, bestScore = i, s
			}
		}
		f := left[best]
		out = append(out, f)
		picked[f.block.DocumentID]++
		left = slices.Delete(left, best, best+1)
	}
	return out
}

// assess judges the evidence: strong when the primary block covers enough of the question's
// weighted terms, weak when something matched but not enough, none when nothing did. Semantic
// support is claimed only for candidates of a semantic provider that survived into the blocks.
func (s *Service) assess(l *lexical.Lang, words []textproc.Group, blocks []EvidenceBlock, l1 L1Details) Relevance {
	if len(blocks) == 0 {
		r := Relevance{Assessment: "none", Reason: "no procedure matched the question"}
		if l1.Status == L1Failed || l1.Status == L1Unavailable {
			r.Reason = "the knowledge provider could not be reached and no procedure matched the question's keywords"
		}
		return r
	}
	semantic := false
	for _, b := range blocks {
		if b.RetrievalLayer != LayerL0 && s.provider.Semantic() {
			semantic = true
		}
	}
	p := blocks[0]
	var cov float64
	if pi, ok := l.PassageOf(p.DocumentID, anchorOf(p.Source)); ok {
		cov = l.Coverage(words, pi)
	} else {
		// An L1 passage whose section is not one of the local copy's (another version, or
		// RAGcore's own chunking) is judged on its own text.
		cov = l.CoverageText(words, p.Title+"\n"+p.Section+"\n"+p.Content, p.DocumentID)
	}
	r := Relevance{SemanticSupport: semantic, Coverage: round4(cov)}
	basis := "lexical evidence (L0 keywords and BM25), no semantic support"
	if semantic {
		basis = "semantic and lexical evidence"
	}
	switch l1.Status {
	case L1Failed, L1Unavailable:
		basis = "L0 keyword evidence only: L1 retrieval " + l1.Status
	case L1Empty:
		basis = "L0 keyword evidence only: L1 returned no candidates"
	case L1Disabled:
		basis = "L0 keyword evidence only: L1 is disabled"
	}
	if cov >= s.opts.GroundedCoverage {
		r.Assessment = "strong"
		r.Reason = fmt.Sprintf("the primary block covers %.0f%% of the question's weighted terms (threshold %.0f%%); %s",
			100*cov, 100*s.opts.GroundedCoverage, basis)
		return r
	}
	r.Assessment = "weak"
	r.Reason = fmt.Sprintf("the best match covers only %.0f%% of the question's weighted terms (threshold %.0f%%); "+
		"the closest procedures are returned, no procedure is inferred; %s", 100*cov, 100*s.opts.GroundedCoverage, basis)
	return r
}

func anchorOf(source string) string {
	if i := strings.LastIndexByte(source, '#'); i >= 0 {
		return source[i+1:]
	}
	return ""
}

func breadcrumb(title, section string) string {
	if title == "" {
		return section
	}
	return title + " > " + section
}

func unite(list []string, add ...string) []string {
	for _, a := range add {
		list = appendNew(list, a)
	}
	return list
}

func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }
