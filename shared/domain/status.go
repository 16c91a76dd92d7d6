package domain

import "time"

// Namespace is the RAGcore namespace the service manages: the one a status names, the store
// keys verifications and sync reports by, and the RAGcore client sends with every request.
type Namespace struct {
	Tenant     string `json:"tenant"`
	Workspace  string `json:"workspace"`
	Collection string `json:"collection"`
}

// Status is the body of GET /status (docs/openapi.yaml), without correlation_id.
type Status struct {
	Language            string    `json:"language"`
	Namespace           Namespace `json:"namespace"`
	Provider            string    `json:"provider"`
	SourceDocumentCount int       `json:"source_document_count"`
	// The newest sync report; null until one has been received.
	ReportedSynced *int       `json:"reported_synced_document_count"`
	ReportedFailed *int       `json:"reported_failed_document_count"`
	LastSyncAt     *time.Time `json:"last_sync_at"`
	LastSyncRunID  *string    `json:"last_sync_run_id"`
	// SyncReportState is "received", "none" (no report yet) or "unavailable" (the store could not
	// be read), so that a null count is never ambiguous.
	SyncReportState string `json:"sync_report_state"`
	// DocumentCount is null unless every managed source was verified.
	DocumentCount   *int         `json:"document_count"`
	StatisticsState string       `json:"statistics_state"`
	Verification    Verification `json:"verification"`
}

// Verification is the "verification" object of a status: what verification found and where it
// came from (Cache). It is the response's own type: a field of the cached record (the corpus
// fingerprint, a cache key) reaches a client only when the contract names it.
type Verification struct {
	VerificationResult
	Cache Cache `json:"cache"`
}

// VerificationResult is the outcome of verifying every managed source of one language by exact
// identity lookups: the part of a status's verification that the store caches.
type VerificationResult struct {
	Checked    int       `json:"checked"`
	Confirmed  int       `json:"confirmed"`
	Missing    []string  `json:"missing"`
	Errors     int       `json:"errors"`
	VerifiedAt time.Time `json:"verified_at"`
	// Complete is true when every managed source got an answer: only then is the count verified.
	Complete bool `json:"complete"`
	// NotIndexed says why each source of Missing does not count (missing, not_active,
	// not_published, duplicated, other_namespace).
	NotIndexed []SourceOutcome `json:"not_indexed"`
	// Failed lists the sources whose lookup failed, with the error class.
	Failed []SourceOutcome `json:"failed"`
	// DurationMs is how long the verification took.
	DurationMs float64 `json:"duration_ms"`
	// Outdated lists the indexed sources whose RAGcore active version is not the version in
	// force today: still counted in Confirmed (document_count), never hidden.
	Outdated []OutdatedSource `json:"outdated"`
}

// OutdatedSource is an indexed source whose RAGcore active version is not the version in force.
type OutdatedSource struct {
	DocumentID string `json:"document_id"`
	InForce    string `json:"in_force"`
	Active     string `json:"active"`
	// Uploaded is the version in force, uploaded and still being processed by RAGcore (not
	// published, so never counted as verified); Active is then the version RAGcore served
	// before, as the previous verification found it ("" when it knew none).
	Uploaded string `json:"uploaded,omitempty"`
}

// SourceOutcome is what verification found for one managed source that did not count.
type SourceOutcome struct {
	DocumentID string `json:"document_id"`
	Reason     string `json:"reason"`
}

// Cache says whether the verification came from the cache, and how old it is. Negative marks a
// verification that did not complete, reused for its shorter TTL: its errors stand, and the
// statistics stay unavailable.
type Cache struct {
	Hit        bool `json:"hit"`
	Negative   bool `json:"negative,omitempty"`
	AgeSeconds int  `json:"age_seconds"`
	TTLSeconds int  `json:"ttl_seconds"`
}

// Components are the health of each part a lookup needs.
type Components struct {
	// Provider is the L1 provider: ok, failed (its health check failed or said it is not ok),
	// or circuit_open (its circuit breaker is open).
	Provider string `json:"provider"`
	// Store is the trace store: ok, or failed (the probe failed or timed out). Lookups answer
	// without it; their traces then go to the log for replay.
	Store string `json:"store"`
}

// Health is GET /health: the status, the provider's name, each component and the sidecar.
type Health struct {
	// Status is ok when every component answers, degraded when one fails while lookups still
	// answer (L0 answers from the loaded procedures without L1, and a lookup's trace goes to the
	// log without the store), unavailable when no lookup can be answered: the provider fails and
	// no procedures are loaded for L0.
	Status     HealthState   `json:"status"`
	Provider   string        `json:"provider"`
	Components Components    `json:"components"`
	Sidecar    SidecarHealth `json:"sidecar"`
}

// HealthState is a health: GET /health's status, and a provider's own (port.Health).
type HealthState string

// The health states.
const (
	HealthOK          HealthState = "ok"
	HealthDegraded    HealthState = "degraded"
	HealthUnavailable HealthState = "unavailable"
)

// SidecarHealth is the sidecar's state: disabled, ok, or failed (it could not be built).
type SidecarHealth struct {
	Enabled bool         `json:"enabled"`
	Status  SidecarState `json:"status"`
}

// SidecarState is the sidecar's part: its health (disabled, ok, failed), a query's outcome
// (port.SidecarResult: ok, empty, failed), or a lookup's or an ask's when no query ran
// (disabled, skipped).
type SidecarState string

// The sidecar states.
const (
	SidecarOK       SidecarState = "ok"       // built; a query's: at least one result
	SidecarEmpty    SidecarState = "empty"    // the knowledge base answered with no result
	SidecarFailed   SidecarState = "failed"   // not built; a query's: no usable answer (ErrorClass)
	SidecarDisabled SidecarState = "disabled" // the sidecar is off
	SidecarSkipped  SidecarState = "skipped"  // on, but the call is not compared (an ask)
)
