package judge

import (
	"slices"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// Candidates appends the sections of hits (a search of l, best first) to out as the port's
// candidates, ranked in their order: what a lexical search answers as L1 (the demo provider, the
// lookup service's sentence pass).
func Candidates(l *lexical.Lang, hits []lexical.Hit, out []port.Candidate) []port.Candidate {
	out = slices.Grow(out, len(hits))
	for i, h := range hits {
		d, s := l.Doc(h.Passage)
		out = append(out, port.Candidate{
			DocumentID: d.ID, Version: d.Version, EffectiveDate: d.EffectiveDate, Title: d.Title,
			Section: s.Heading, Anchor: s.Anchor, Category: d.Category, Source: l.Source(h.Passage),
			Content: s.Content, Score: h.Score, Rank: i + 1,
		})
	}
	return out
}
