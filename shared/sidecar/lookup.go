package sidecar

import (
	"context"
	"fmt"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// Lookup is the sidecar as the lookup flow uses it (port.Sidecar): the Bedrock queries with the
// allow-list of the corpus applied to their results.
type Lookup struct {
	s      *Sidecar
	corpus *knowledge.Corpus
}

var (
	_ port.Sidecar = Lookup{}
	_ port.Sidecar = Broken{}
)

// ForLookup adapts s to the lookup flow; only procedures of corpus keep their identity.
func ForLookup(s *Sidecar, corpus *knowledge.Corpus) Lookup { return Lookup{s: s, corpus: corpus} }

// Query asks the knowledge base the lookup's question.
func (l Lookup) Query(ctx context.Context, q port.Query) port.SidecarResult {
	r := l.s.Query(ctx, Query{Question: q.Question, Language: q.Language, Category: q.Category, TopK: q.TopK,
		CorrelationID: q.CorrelationID})
	for i, c := range r.Results {
		if c.DocumentID == "" || l.corpus.Document(q.Language, c.DocumentID) == nil {
			// Not a managed procedure: the allow-list applies to the sidecar too. Only its rank and
			// score stay, so the comparison still counts it; no location URI, title or text of a
			// document outside the corpus reaches a caller.
			r.Results[i] = port.Comparable{Source: fmt.Sprintf("unmanaged:%d", c.Rank), Rank: c.Rank, Score: c.Score}
		}
	}
	return r
}

// Broken stands for a sidecar that could not be built: every lookup reports it failed with Class.
type Broken struct{ Class string }

// Query reports the failure.
func (b Broken) Query(context.Context, port.Query) port.SidecarResult {
	return port.SidecarResult{Status: domain.SidecarFailed, ErrorClass: b.Class}
}
