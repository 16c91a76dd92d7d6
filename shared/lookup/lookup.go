// Package lookup holds the records of a lookup and an ask that cross package lines: the
// validated requests, the hints and L1 details a response and a trace share, and the trace the
// store keeps and the log carries for replay, with its one encoding (TraceItem). It holds no
// behaviour of the lookup itself (that is the retrieval service), so that the store and the
// trace replay name these records without linking the service.
package lookup

import "github.com/northstar-mobility/mobilityops-knowledge/shared/port"

// Layer is a retrieval layer of the API contract (docs/openapi.yaml): the layer that found a
// block, or the layers that answered a call.
type Layer string

// The retrieval layers.
const (
	LayerL0   Layer = "L0"
	LayerL1   Layer = "L1"
	LayerBoth Layer = "L0+L1"
	LayerNone Layer = "none"
)

// L1Status is the outcome of a lookup's L1 call, an L1 status of the API contract
// (docs/openapi.yaml).
type L1Status string

// The L1 statuses.
const (
	L1OK          L1Status = "ok"
	L1Empty       L1Status = "empty"
	L1Failed      L1Status = "failed"
	L1Disabled    L1Status = "disabled"
	L1Unavailable L1Status = "unavailable"
)

// LookupRequest is a validated lookup.
type LookupRequest struct {
	Question string
	Language string
	TopK     int
	// AsOf is the day (ISO date) whose procedure versions in force answer; "" means today in
	// the configured time zone.
	AsOf string
	// Procedure is the procedure id the operator confirmed after a clarification: the lookup
	// considers only that procedure's version in force and is judged on its own basis
	// ("confirmed"); "" considers every procedure.
	Procedure     string
	Actor         port.Actor
	CorrelationID string
}

// AskRequest is a validated ask.
type AskRequest struct {
	Question string
	Language string
	// AsOf and Procedure are as in LookupRequest.
	AsOf          string
	Procedure     string
	Actor         port.Actor
	CorrelationID string
	// Tool is the name the trace records; empty means ToolAsk (POST /ask). An MCP tool call sets
	// its own tool name.
	Tool string
}

// L0Hints is the hint data of the keyword/front-matter layer.
type L0Hints struct {
	MatchedTitles   []string `json:"matched_titles"`
	MatchedKeywords []string `json:"matched_keywords"`
	Domains         []string `json:"domains"`
	Entities        []string `json:"entities"`
}

// L1Details describes the L1 call of a lookup.
type L1Details struct {
	Status         L1Status `json:"status"`
	Provider       string   `json:"provider"`
	CategoryFilter *string  `json:"category_filter"`
	CandidateCount int      `json:"candidate_count"`
	ScoreKind      string   `json:"score_kind"`
	ErrorClass     string   `json:"error_class,omitempty"`
	// Calls is how many L1 requests the lookup made: 2 when a category-filtered call came back
	// empty or weak and an unfiltered call followed (UnfilteredRetry).
	Calls           int  `json:"calls"`
	UnfilteredRetry bool `json:"unfiltered_retry"`
	// OutdatedCount is how many candidates were of another version than the one in force
	// (not in CandidateCount; returned as outdated blocks, never evidence).
	OutdatedCount int `json:"outdated_count,omitempty"`
}
