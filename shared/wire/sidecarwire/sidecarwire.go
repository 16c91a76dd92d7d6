// Package sidecarwire builds the Bedrock sidecar of a lookup from the function's parts. It is
// apart from wire so that only the binaries that run the sidecar link the Bedrock client.
package sidecarwire

import (
	"context"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/sidecar"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/wire"
)

// New builds the comparison path only when SIDECAR_ENABLED is true: off, no client exists and no
// call can be made. A sidecar that cannot be built is reported as failed on every lookup and in
// /health (and logged here); the main path never depends on it.
func New(ctx context.Context, p *wire.Parts) (port.Sidecar, domain.SidecarHealth) {
	cfg := p.Config
	if !cfg.SidecarEnabled {
		return nil, domain.SidecarHealth{Status: domain.SidecarDisabled}
	}
	o := sidecar.Options{KnowledgeBaseID: cfg.BedrockKnowledgeBase, Endpoint: cfg.BedrockEndpoint,
		Region: cfg.AWSRegion, Timeout: cfg.SidecarTimeout, Log: p.Log}
	awsCfg, err := p.AWS() // instrumented already: its APIOptions carry the tracing
	var s *sidecar.Sidecar
	if err == nil {
		o.AWSConfig = &awsCfg
		s, err = sidecar.New(ctx, o)
	}
	if err != nil {
		// Reported as the sidecar's status on every lookup and in /health, never as a failure of
		// the main path.
		p.Log.ErrorContext(ctx, "sidecar could not be built; lookups report it failed", "error", err.Error())
		return sidecar.Broken{Class: sidecar.ClassInvalidConfig}, domain.SidecarHealth{Enabled: true, Status: domain.SidecarFailed}
	}
	return sidecar.ForLookup(s, p.Corpus), domain.SidecarHealth{Enabled: true, Status: domain.SidecarOK}
}
