package port

import (
	"context"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
)

// The provider's interface (health, ask, sync_manifest), plus Retrieve, the
// L1 layer of a lookup, and VerifySource, the evidence behind /status's document_count, in small
// parts: the demo provider and the RAGcore provider implement every one; each consumer declares
// what it uses (the lookup service a Retriever and an Answerer, status a HealthChecker and a
// Verifier, indexsync a ManifestSyncer).

// Named is what every part of a provider reports: its name as the API reports it, "demo" or
// "ragcore".
type Named interface {
	Name() string
}

// Retriever is the L1 layer of a lookup.
type Retriever interface {
	Named
	// Semantic reports whether Retrieve is a semantic (embedding) search. Only semantic
	// candidates may give a lookup semantic support.
	Semantic() bool
	// ScoreKind names the meaning of Candidate.Score ("bm25", "cosine_similarity").
	ScoreKind() string
	Retrieve(ctx context.Context, q Query) ([]Candidate, error)
}

// Answerer gives a grounded answer (POST /ask).
type Answerer interface {
	Named
	Ask(ctx context.Context, q AskQuery) (GroundedAnswer, error)
}

// ManifestSyncer sends the authoritative procedures of one language (POST /sync).
type ManifestSyncer interface {
	Named
	SyncManifest(ctx context.Context, call Call, docs []DocumentRef) (SyncResult, error)
}

// HealthChecker reports the provider's health (GET /health).
type HealthChecker interface {
	Named
	Health(ctx context.Context, call Call) Health
}

// SourceIndexed is the outcome of VerifySource for a source that counts as indexed; any other
// outcome names why it does not ("missing", "not_published", ...).
const SourceIndexed = "indexed"

// SourceNotPublished is the outcome for a source whose version the provider holds but has not
// published (still processing an upload, or failed): it does not count as indexed.
const SourceNotPublished = "not_published"

// Verifier is implemented by providers that can confirm, one source at a time, that a managed
// source is indexed: the independent evidence behind the status's document_count.
type Verifier interface {
	VerifySource(ctx context.Context, call Call, lang, documentID string) (outcome string, err error)
}

// VersionVerifier is implemented by Verifiers whose identity lookup also tells the version the
// provider serves: activeVersion is the indexed source's active version, or for
// SourceNotPublished the version the provider holds unpublished (an upload it is processing);
// "" otherwise.
type VersionVerifier interface {
	VerifySourceVersion(ctx context.Context, call Call, lang, documentID string) (outcome, activeVersion string, err error)
}

// BreakerReporter is implemented by providers with a circuit breaker: BreakerOpen reports
// whether calls are being refused without reaching the provider.
type BreakerReporter interface {
	BreakerOpen() bool
}

// Health is a provider's health.
type Health struct {
	Status domain.HealthState
	Detail string // safe for clients: no host names, no SDK errors
}

// Query is an L1 retrieval request.
type Query struct {
	Question string
	Language string
	TopK     int
	// Category is the L0-derived metadata filter; empty means no filter.
	Category string
	// Procedure confines the search to one procedure (the one an operator confirmed); empty
	// means every procedure. A provider whose platform filters by category only (RAGcore) sends
	// the procedure's category as Category, and the service keeps that procedure's candidates.
	Procedure string
	// Terms are the question's index terms as the service analysed them; a lexical provider
	// may use them instead of analysing the question again.
	Terms []string
	// TermWeights weigh Terms for a lexical provider: missing terms weigh 1, a synonym's
	// terms less (lexical.SynonymWeight).
	TermWeights   map[string]float64
	Actor         Actor
	CorrelationID string
	// AsOf is the day (ISO date) whose procedure versions in force answer; a provider that
	// searches the corpus in the process (the demo's) searches that day's versions.
	AsOf string
	// Buffer, when not nil, is an array the caller lends for the call: a provider may append its
	// candidates to Buffer[:0] instead of making an array, and the caller reads them only until
	// it lends the array again. A provider may ignore it.
	Buffer []Candidate
}

// Candidate is one L1 passage.
type Candidate struct {
	DocumentID    string
	Version       string
	EffectiveDate string
	Title         string
	Section       string
	Anchor        string
	Category      string
	Source        string // "procedures/<language>/<id>.md#<anchor>"
	Content       string
	Score         float64
	Rank          int
}

// EvidenceState is an evidence state of the API contract (docs/openapi.yaml): a lookup's, an
// answer's, and the state a provider's GroundedAnswer claims.
type EvidenceState string

// The evidence states.
const (
	StateGrounded     EvidenceState = "grounded"
	StateInsufficient EvidenceState = "insufficient"
	StateUnavailable  EvidenceState = "unavailable"
)

// AskQuery is a grounded-answer request.
type AskQuery struct {
	Question      string
	Language      string
	Category      string
	Actor         Actor
	CorrelationID string
	// Evidence is set for a provider that answers from the lookup's evidence (a lexical
	// provider such as the demo's): the blocks POST /lookup returns for the same question, in
	// the same order, each with the excerpt cut around the sentences that matched.
	// EvidenceState is the lookup's judgement of them, which the answer must not exceed.
	Evidence      []AskEvidence
	EvidenceState EvidenceState
}

// AskEvidence is one ranked block of a lookup, offered to an answer with its excerpt.
type AskEvidence struct {
	Block   Passage
	Excerpt string
}

// Passage is an evidence block of a lookup as a provider sees it: a section of a procedure with
// its provenance and content.
type Passage struct {
	Source        string // "procedures/<language>/<id>.md#<anchor>"
	DocumentID    string
	Version       string
	EffectiveDate string
	Title         string
	Breadcrumb    string // "Title > Section"
	Section       string
	Category      string
	Content       string
	Rank          int
}

// GroundedAnswer is what an Answerer answers: the text, its evidence state and the sources it
// cites.
type GroundedAnswer struct {
	Answer        string
	EvidenceState EvidenceState
	Sources       []AnswerSource
	// Generated is true when the answer text was written by a model, false for a template.
	Generated bool
}

// AnswerSource is one cited source of an answer.
type AnswerSource struct {
	DocumentID string `json:"document_id"`
	Title      string `json:"title"`
	Version    string `json:"version"`
	Section    string `json:"section"`
	Excerpt    string `json:"excerpt"`
	// Outdated marks a citation of another version than the one in force on the day asked:
	// it never grounds the answer.
	Outdated bool `json:"outdated,omitempty"`
	// NextVersion announces the procedure's version taking effect within the upcoming window
	// after the day asked, as on a lookup's blocks; nil when none does.
	NextVersion *NextVersion `json:"next_version,omitempty"`
}

// NextVersion is a procedure's coming version: its version and the day it takes effect.
type NextVersion struct {
	Version       string `json:"version"`
	EffectiveDate string `json:"effective_date"`
}

// DocumentRef names one authoritative source in a manifest sync.
type DocumentRef struct {
	DocumentID    string
	Language      string
	Title         string
	Version       string
	EffectiveDate string
	Category      string
	SHA256        string
	Content       []byte
}

// SyncResult is the outcome of a manifest sync for one language.
type SyncResult struct {
	Documents int
	Uploaded  int
	// UploadedIDs are the document ids of the Uploaded versions, ascending: the sync names
	// each document it switched.
	UploadedIDs []string
	Unchanged   int
	Failed      []domain.SyncFailure
	// Note says, in plain words, what the provider did ("the demo provider syncs nothing").
	Note string
}
