package lookup

import (
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// Trace is the persisted record of one lookup or ask call (tool_invocation). It holds no
// question text: only its SHA-256 and length.
type Trace struct {
	InvocationID     string       `json:"invocation_id"`
	Tool             string       `json:"tool"`
	CreatedAt        time.Time    `json:"created_at"`
	ActorID          string       `json:"actor_id"`
	QuestionSHA256   string       `json:"question_sha256"`
	QuestionChars    int          `json:"question_chars"`
	Language         string       `json:"language"`
	RetrievalDetails TraceDetails `json:"retrieval_details"`
	// ExpiresAt is when the retention ends (DynamoDB TTL attribute when stored there).
	ExpiresAt time.Time `json:"expires_at"`
}

// Tools recorded in traces.
const (
	ToolLookup = "lookup_knowledge"
	ToolAsk    = "ask"
)

// TraceDetails is tool_invocation.retrieval_details: compact by design.
type TraceDetails struct {
	Layer             Layer              `json:"layer"`
	EvidenceState     port.EvidenceState `json:"evidence_state"`
	L0                L0Hints            `json:"l0"`
	L1                L1Details          `json:"l1"`
	CandidateCount    int                `json:"candidate_count"`
	FinalBlockCount   int                `json:"final_block_count"`
	EvidenceSummaries []BlockSummary     `json:"evidence_summaries"`
	Sidecar           SidecarStatus      `json:"sidecar"`
	LatencyMs         Latency            `json:"latency_ms"`
	// AsOf is the day whose versions in force answered; AsOfRequested says the caller named it
	// (as_of) rather than it being today. Absent from a trace that names no day.
	AsOf          string `json:"as_of,omitempty"`
	AsOfRequested bool   `json:"as_of_requested,omitempty"`
	// Procedure is the confirmed procedure the lookup was confined to; Clarification the
	// procedures a clarification offered. Absent when none.
	Procedure     string   `json:"procedure,omitempty"`
	Clarification []string `json:"clarification,omitempty"`
	// Complements are the procedures named as answering other parts of the question.
	Complements []string `json:"complements,omitempty"`
}

// BlockSummary is an evidence block cut down for the trace: content at most SummaryChars.
// Score is absent when the path had none (the sources of an answer).
type BlockSummary struct {
	Source         string `json:"source"`
	Title          string `json:"title"`
	RetrievalLayer Layer  `json:"retrieval_layer"`
	// DocumentID and Version name the procedure version the block quoted; Outdated marks a
	// candidate of a version not in force that day (never evidence).
	DocumentID string      `json:"document_id,omitempty"`
	Version    string      `json:"version,omitempty"`
	Outdated   bool        `json:"outdated,omitempty"`
	Score      *port.Score `json:"score,omitempty"`
	HitReasons []string    `json:"hit_reasons"`
	Content    string      `json:"content"`
	// Fusion is the basis of the block's place: its rank on each path and the fused value.
	Fusion *FusionBasis `json:"fusion,omitempty"`
}

// SummaryChars is the longest content kept in a block summary, in characters.
const SummaryChars = 200

// SidecarStatus is the sidecar's part in a call.
type SidecarStatus struct {
	Enabled    bool                `json:"enabled"`
	Status     domain.SidecarState `json:"status"`
	ErrorClass string              `json:"error_class,omitempty"`
	// Comparison is the trace's comparison summary (overlap@k, rank agreement, sources found
	// by one path only); absent when the sidecar is off or failed.
	Comparison *Comparison `json:"comparison,omitempty"`
}

// Latency is per-layer latency in milliseconds.
type Latency struct {
	L0    float64 `json:"l0"`
	L1    float64 `json:"l1"`
	Total float64 `json:"total"`
}

// Fusion basis recorded per block in the trace.
type FusionBasis struct {
	L0Rank   int     `json:"l0_rank,omitempty"`
	L1Rank   int     `json:"l1_rank,omitempty"`
	L1Chunks int     `json:"l1_chunks,omitempty"`
	RRF      float64 `json:"rrf"`
}

// Comparison summarises how two ranked result lists of different paths agree. It holds no score:
// each path's score kind is only labelled in ScoreSemantics.
type Comparison struct {
	// K is the cut-off actually used (see Compare).
	K int `json:"k"`
	// OverlapAtK is |shared| / max(|primary top-k|, |sidecar top-k|): 1 when both top-k lists hold
	// the same identities, even when both are shorter than K; below 1 when one path returned
	// fewer or other results; 0 when both are empty.
	OverlapAtK float64 `json:"overlap_at_k"`
	// Shared are the identities in both top-k lists, in the primary path's order.
	Shared []string `json:"shared"`
	// RankAgreement is Kendall's tau between the two paths' orders of the shared identities: 1 same
	// order, -1 reversed. Null when fewer than 2 identities are shared.
	RankAgreement  *float64          `json:"rank_agreement"`
	OnlyPrimary    []string          `json:"only_primary"`
	OnlySidecar    []string          `json:"only_sidecar"`
	ScoreSemantics map[string]string `json:"score_semantics"` // {"primary": kind, "sidecar": kind}: labelled, never compared
}
