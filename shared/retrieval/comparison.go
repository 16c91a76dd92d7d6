package retrieval

import (
	"cmp"
	"math"
	"slices"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// Compare summarises two ranked result lists of different paths without ever comparing their
// scores: it reads only identities and rank order.
//
// Identity. A result's identity is its DocumentID plus the section anchor of its Source (the part
// after '#'), written "<document_id>#<anchor>", when every result with a document id in both lists
// has an anchor; otherwise the comparison falls back to the document level for all results,
// "<document_id>", because a section cannot match a whole document. A result without a document
// id is identified by its Source (the location URI); a result with neither is left out.
//
// Order. Each list is ordered by Rank (ascending; a Rank below 1 sorts last, slice order breaks
// ties). Repeated identities (several chunks of one section, or several sections of one document
// at the document level) count once, at their best rank. The top-k of a list is its first k
// distinct identities; k < 1 compares the whole lists (K is then the longer list's count).
func Compare(primaryKind string, primary []port.Comparable, sidecarKind string, side []port.Comparable, k int) lookup.Comparison {
	sectionLevel := allAnchored(primary) && allAnchored(side)
	p := distinct(primary, sectionLevel)
	s := distinct(side, sectionLevel)
	if k < 1 {
		k = max(len(p), len(s))
	}
	p, s = p[:min(k, len(p))], s[:min(k, len(s))]

	sidePos := make(map[string]int, len(s))
	for i, id := range s {
		sidePos[id] = i
	}
	c := lookup.Comparison{
		K: k, Shared: []string{}, OnlyPrimary: []string{}, OnlySidecar: []string{},
		ScoreSemantics: map[string]string{"primary": cmp.Or(primaryKind, "unknown"), "sidecar": cmp.Or(sidecarKind, "unknown")},
	}
	var order []int // sidecar positions of the shared identities, in primary order
	inPrimary := make(map[string]bool, len(p))
	for _, id := range p {
		inPrimary[id] = true
		if pos, ok := sidePos[id]; ok {
			c.Shared = append(c.Shared, id)
			order = append(order, pos)
		} else {
			c.OnlyPrimary = append(c.OnlyPrimary, id)
		}
	}
	for _, id := range s {
		if !inPrimary[id] {
			c.OnlySidecar = append(c.OnlySidecar, id)
		}
	}
	if n := max(len(p), len(s)); n > 0 {
		c.OverlapAtK = round4(float64(len(c.Shared)) / float64(n))
	}
	if len(order) >= 2 {
		tau := round4(kendallTau(order))
		c.RankAgreement = &tau
	}
	return c
}

// kendallTau is Kendall's tau-a between the order 0..n-1 and order (distinct positions).
func kendallTau(order []int) float64 {
	n := len(order)
	concordant := 0
	for i := range n {
		for j := i + 1; j < n; j++ {
			if order[i] < order[j] {
				concordant++
			}
		}
	}
	pairs := n * (n - 1) / 2
	return float64(2*concordant-pairs) / float64(pairs)
}

// allAnchored reports whether every result with a document id has a section anchor.
func allAnchored(list []port.Comparable) bool {
	for _, c := range list {
		if c.DocumentID != "" && anchorOf(c.Source) == "" {
			return false
		}
	}
	return true
}

// distinct is the list's identities in rank order, each once.
func distinct(list []port.Comparable, sectionLevel bool) []string {
	ranked := slices.Clone(list)
	slices.SortStableFunc(ranked, func(a, b port.Comparable) int { return cmp.Compare(rankKey(a), rankKey(b)) })
	out := make([]string, 0, len(ranked))
	seen := make(map[string]bool, len(ranked))
	for _, c := range ranked {
		id := identity(c, sectionLevel)
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	return out
}

func identity(c port.Comparable, sectionLevel bool) string {
	if c.DocumentID == "" {
		return c.Source
	}
	if sectionLevel {
		return c.DocumentID + "#" + anchorOf(c.Source)
	}
	return c.DocumentID
}

func rankKey(c port.Comparable) int {
	if c.Rank < 1 {
		return math.MaxInt
	}
	return c.Rank
}
