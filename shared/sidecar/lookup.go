package sidecar

import (
	"context"
	"fmt"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
)

// Lookup is the sidecar as the lookup flow uses it (retrieval.Sidecar): the Bedrock queries with
// the allow-list of the corpus applied to their results.
type Lookup struct {
	s      *Sidecar
	corpus *knowledge.Corpus
}

var (
	_ retrieval.Sidecar = Lookup{}
	_ retrieval.Sidecar = Broken{}
)

// ForLookup adapts s to the lookup flow; only procedures of corpus keep their identity.
func ForLookup(s *Sidecar, corpus *knowledge.Corpus) Lookup { return Lookup{s: s, corpus: corpus} }

// Query asks the knowledge base the lookup's question.
func (l Lookup) Query(ctx context.Context, q port.Query) retrieval.SidecarReport {
	r := l.s.Query(ctx, Query{Question: q.Question, Language: q.Language, Category: q.Category, TopK: q.TopK,
		CorrelationID: q.CorrelationID})
	for i, c := range r.Results {
		if c.DocumentID == "" || l.corpus.Document(q.Language, c.DocumentID) == nil {
			// Not a managed procedure: the allow-list applies to the sidecar too. Only its rank and
			// score stay, so the comparison still counts it; no location URI, title or text of a
			// document outside the corpus reaches a caller.
			r.Results[i] = retrieval.Comparable{Source: fmt.Sprintf("unmanaged:%d", c.Rank), Rank: c.Rank, Score: c.Score}
		}
	}
	return retrieval.SidecarReport{SidecarStatus: retrieval.SidecarStatus{Status: r.Status, ErrorClass: r.ErrorClass},
		ScoreKind: r.ScoreKind, LatencyMs: r.LatencyMs, Results: r.Results}
}

// Compare compares the sidecar's results with the main blocks by identity and rank; the main
// blocks' scores keep their own label and are never set against the sidecar's.
func (l Lookup) Compare(report retrieval.SidecarReport, blocks []retrieval.EvidenceBlock, scoreKind string) *retrieval.Comparison {
	primary := make([]retrieval.Comparable, 0, len(blocks))
	for _, bl := range blocks {
		primary = append(primary, retrieval.Comparable{Source: bl.Source, DocumentID: bl.DocumentID, Title: bl.Title,
			Breadcrumb: bl.Breadcrumb, Category: bl.Category, Version: bl.Version, Rank: bl.Rank,
			Preview: retrieval.Clip(bl.Content, retrieval.SummaryChars), Score: bl.Score})
	}
	c := retrieval.Compare(scoreKind, primary, report.ScoreKind, report.Results, len(blocks))
	return &c
}

// Broken stands for a sidecar that could not be built: every lookup reports it failed with Class.
type Broken struct{ Class string }

// Query reports the failure.
func (b Broken) Query(context.Context, port.Query) retrieval.SidecarReport {
	return retrieval.SidecarReport{SidecarStatus: retrieval.SidecarStatus{Status: StatusFailed, ErrorClass: b.Class}}
}

// Compare has nothing to compare.
func (Broken) Compare(retrieval.SidecarReport, []retrieval.EvidenceBlock, string) *retrieval.Comparison {
	return nil
}
