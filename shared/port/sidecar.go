package port

import (
	"context"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
)

// Sidecar is the comparison path, off by default: it runs beside L1
// under its own deadline and returns its results, which the lookup service compares with its
// main blocks, never changing them.
type Sidecar interface {
	// Query runs the sidecar; it never fails: a failure is a result with status "failed".
	Query(ctx context.Context, q Query) SidecarResult
}

// SidecarResult is the outcome of a sidecar query.
type SidecarResult struct {
	Status     domain.SidecarState `json:"status"`                // domain.SidecarOK, SidecarEmpty or SidecarFailed
	ErrorClass string              `json:"error_class,omitempty"` // the sidecar's class when failed
	ScoreKind  string              `json:"score_kind"`            // the label of the results' scores
	Results    []Comparable        `json:"results"`               // never nil from the Bedrock sidecar
	LatencyMs  float64             `json:"latency_ms"`
}

// Comparable is one result normalised to the structure the comparison reads, aligned with the
// main path's evidence blocks.
type Comparable struct {
	// Source is "procedures/<lang>/<id>.md#<anchor>" when the document id is known ("#<anchor>"
	// only with a section), else the location URI.
	Source     string `json:"source"`
	DocumentID string `json:"document_id"`
	Title      string `json:"title,omitempty"`
	Breadcrumb string `json:"breadcrumb,omitempty"` // "Title > Section"
	Category   string `json:"category,omitempty"`
	Version    string `json:"version,omitempty"`
	Rank       int    `json:"rank"`    // from 1, in the order the path returned the results
	Preview    string `json:"preview"` // content cut to at most 200 runes, "…" marking the cut
	Score      Score  `json:"score"`
}

// Score is a score with its meaning: scores of different paths are never compared as numbers.
type Score struct {
	Value          float64 `json:"value"`
	Kind           string  `json:"kind"`
	HigherIsBetter bool    `json:"higher_is_better"`
}
