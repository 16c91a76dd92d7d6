package app

import (
	"context"
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
		return sidecar.Broken{Class: sidecar.ClassInvalidConfig}, status.SidecarHealth{Enabled: true, Status: "failed"}, err
	}
	return sidecar.ForLookup(s, corpus), status.SidecarHealth{Enabled: true, Status: "ok"}, nil
}
