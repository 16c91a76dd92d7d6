package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/sidecar"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/status"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/tracing"
)

// newSidecar builds the comparison path only when SIDECAR_ENABLED is true: off, no client exists
// and no call can be made. A sidecar that cannot be built is reported as failed on every lookup
// and in /health; the main path never depends on it.
func newSidecar(ctx context.Context, cfg config.Config, corpus *knowledge.Corpus, tracer *tracing.Tracer, log *slog.Logger) (retrieval.Sidecar, status.SidecarHealth, error) {
	if !cfg.SidecarEnabled {
		return nil, status.SidecarHealth{Status: "disabled"}, nil
	}
	o := sidecar.Options{KnowledgeBaseID: cfg.BedrockKnowledgeBase, Endpoint: cfg.BedrockEndpoint,
		Region: cfg.AWSRegion, Timeout: cfg.SidecarTimeout, Log: log}
	if tracer.Active() {
		o.APIOptions = tracer.APIOptions()
	}
	s, err := sidecar.New(ctx, o)
	if err != nil {
		return brokenSidecar{class: sidecar.ClassInvalidConfig}, status.SidecarHealth{Enabled: true, Status: "failed"}, err
	}
	return bedrockSidecar{s: s, corpus: corpus}, status.SidecarHealth{Enabled: true, Status: "ok"}, nil
}

// bedrockSidecar adapts the Bedrock knowledge base sidecar to the lookup flow.
type bedrockSidecar struct {
	s      *sidecar.Sidecar
	corpus *knowledge.Corpus
}

func (b bedrockSidecar) Query(ctx context.Context, q retrieval.Query) retrieval.SidecarReport {
	r := b.s.Query(ctx, sidecar.Query{Question: q.Question, Language: q.Language, Category: q.Category, TopK: q.TopK,
		CorrelationID: q.CorrelationID})
	for i, c := range r.Results {
		if c.DocumentID == "" || b.corpus.Document(q.Language, c.DocumentID) == nil {
			// Not a managed procedure: the allow-list applies to the sidecar too. Only its rank and
			// score stay, so the comparison still counts it; no location URI, title or text of a
			// document outside the corpus reaches a caller.
			r.Results[i] = sidecar.Comparable{Source: fmt.Sprintf("unmanaged:%d", c.Rank), Rank: c.Rank, Score: c.Score}
		}
	}
	return retrieval.SidecarReport{SidecarStatus: retrieval.SidecarStatus{Status: r.Status, ErrorClass: r.ErrorClass},
		ScoreKind: r.ScoreKind, LatencyMs: r.LatencyMs, Results: r.Results}
}

// Compare compares the sidecar's results with the main blocks by identity and rank; the main
// blocks' scores keep their own label and are never set against the sidecar's.
func (b bedrockSidecar) Compare(report retrieval.SidecarReport, blocks []retrieval.EvidenceBlock, scoreKind string) any {
	side, _ := report.Results.([]sidecar.Comparable)
	primary := make([]sidecar.Comparable, 0, len(blocks))
	for _, bl := range blocks {
		primary = append(primary, sidecar.Comparable{Source: bl.Source, DocumentID: bl.DocumentID, Title: bl.Title,
			Breadcrumb: bl.Breadcrumb, Category: bl.Category, Version: bl.Version, Rank: bl.Rank,
			Preview: retrieval.Clip(bl.Content, retrieval.SummaryChars),
			Score:   sidecar.Score{Value: bl.Score.Value, Kind: bl.Score.Kind, HigherIsBetter: bl.Score.HigherIsBetter}})
	}
	return sidecar.Compare(scoreKind, primary, report.ScoreKind, side, len(blocks))
}

// brokenSidecar stands for a sidecar that could not be built: every lookup reports it failed.
type brokenSidecar struct{ class string }

func (b brokenSidecar) Query(context.Context, retrieval.Query) retrieval.SidecarReport {
	return retrieval.SidecarReport{SidecarStatus: retrieval.SidecarStatus{Status: "failed", ErrorClass: b.class}}
}

func (b brokenSidecar) Compare(retrieval.SidecarReport, []retrieval.EvidenceBlock, string) any {
	return nil
}
