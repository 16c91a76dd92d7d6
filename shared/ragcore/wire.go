package ragcore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// The wire types below are the RAGcore contract's (docs/ragcore.md) request and response bodies, field for field. Responses
// are checked by validate after decoding: a response that lacks a field the service relies on, or
// carries a value outside the contract's set, is a bad_response, never half-used. Fields the
// contract does not name are ignored, so that RAGcore can add fields without breaking us.

// HealthResponse is GET /v1/health.
type HealthResponse struct {
	Status domain.HealthState `json:"status"`
}

func (r *HealthResponse) validate() error {
	return oneOf("status", r.Status, domain.HealthOK, domain.HealthDegraded)
}

// Document is one entry of GET /v1/documents.
type Document struct {
	DocumentID    string           `json:"document_id"`
	SourceID      string           `json:"source_id"`
	ExternalID    string           `json:"external_id"`
	Tenant        string           `json:"tenant"`
	Workspace     string           `json:"workspace"`
	Collection    string           `json:"collection"`
	Status        string           `json:"status"`
	ActiveVersion *DocumentVersion `json:"active_version"`
	Metadata      DocumentMetadata `json:"metadata"`
}

// DocumentVersion is a document's active version. ContentSHA256 is the hash of RAGcore's parsed
// artifact, not of the uploaded bytes: it is never compared with a local hash.
type DocumentVersion struct {
	Version       string `json:"version"`
	Status        string `json:"status"`
	ContentSHA256 string `json:"content_sha256"`
	PublishedAt   string `json:"published_at"`
}

// DocumentMetadata is the metadata RAGcore keeps with a document.
type DocumentMetadata struct {
	Language      string `json:"language"`
	Category      string `json:"category"`
	EffectiveDate string `json:"effective_date"`
}

// DocumentsResponse is GET /v1/documents.
type DocumentsResponse struct {
	Documents []Document `json:"documents"`
}

func (r *DocumentsResponse) validate() error {
	if r.Documents == nil {
		return missing("documents")
	}
	for i, d := range r.Documents {
		if d.DocumentID == "" || d.SourceID == "" || d.ExternalID == "" {
			return fmt.Errorf("documents[%d]: document_id, source_id and external_id are required", i)
		}
		if err := oneOf(fmt.Sprintf("documents[%d].status", i), d.Status, "active", "archived", "deleted"); err != nil {
			return err
		}
		if v := d.ActiveVersion; v != nil {
			if err := oneOf(fmt.Sprintf("documents[%d].active_version.status", i), v.Status,
				"published", "processing", "failed"); err != nil {
				return err
			}
		}
	}
	return nil
}

// Filters are the metadata filters of a retrieve or answer request.
type Filters struct {
	Category string `json:"category,omitempty"`
}

// RetrieveRequest is POST /v1/retrieve.
type RetrieveRequest struct {
	Collection string   `json:"collection"`
	Query      string   `json:"query"`
	Language   string   `json:"language"`
	TopK       int      `json:"top_k"`
	Filters    *Filters `json:"filters,omitempty"`
}

// RetrieveResponse is the answer to POST /v1/retrieve.
type RetrieveResponse struct {
	ScoreSemantics string          `json:"score_semantics"`
	Candidates     []RetrievedItem `json:"candidates"`
}

// RetrievedItem is one semantic candidate.
type RetrievedItem struct {
	SourceID   string   `json:"source_id"`
	ExternalID string   `json:"external_id"`
	DocumentID string   `json:"document_id"`
	Version    string   `json:"version"`
	Title      string   `json:"title"`
	Breadcrumb []string `json:"breadcrumb"`
	Section    string   `json:"section"`
	Category   string   `json:"category"`
	Content    string   `json:"content"`
	Score      *float64 `json:"score"`
	Rank       int      `json:"rank"`
}

func (r *RetrieveResponse) validate() error {
	if r.ScoreSemantics == "" {
		return missing("score_semantics")
	}
	if r.Candidates == nil {
		return missing("candidates")
	}
	for i, c := range r.Candidates {
		if c.SourceID == "" || c.ExternalID == "" || c.Version == "" || c.Section == "" || c.Content == "" {
			return fmt.Errorf("candidates[%d]: source_id, external_id, version, section and content are required", i)
		}
		if c.Score == nil {
			return missing(fmt.Sprintf("candidates[%d].score", i))
		}
	}
	return nil
}

// AnswerRequest is POST /v1/answer.
type AnswerRequest struct {
	Collection string   `json:"collection"`
	Question   string   `json:"question"`
	Language   string   `json:"language"`
	Filters    *Filters `json:"filters,omitempty"`
}

// AnswerResponse is the answer to POST /v1/answer.
type AnswerResponse struct {
	Answer        string             `json:"answer"`
	EvidenceState port.EvidenceState `json:"evidence_state"`
	Citations     []Citation         `json:"citations"`
}

// Citation is one source RAGcore cites for an answer.
type Citation struct {
	SourceID   string `json:"source_id"`
	ExternalID string `json:"external_id"`
	Title      string `json:"title"`
	Version    string `json:"version"`
	Section    string `json:"section"`
	Excerpt    string `json:"excerpt"`
}

func (r *AnswerResponse) validate() error {
	if err := oneOf("evidence_state", r.EvidenceState, port.StateGrounded, port.StateInsufficient); err != nil {
		return err
	}
	if r.EvidenceState == port.StateGrounded && strings.TrimSpace(r.Answer) == "" {
		return missing("answer") // a grounded answer without text would be passed on as generated
	}
	for i, c := range r.Citations {
		if c.SourceID == "" || c.ExternalID == "" {
			return fmt.Errorf("citations[%d]: source_id and external_id are required", i)
		}
	}
	return nil
}

// UploadRequest is PUT /v1/sources/{source_id}/documents/{external_id}.
type UploadRequest struct {
	Collection  string         `json:"collection"`
	Content     string         `json:"content"`
	ContentType string         `json:"content_type"`
	Metadata    UploadMetadata `json:"metadata"`
}

// UploadMetadata is the metadata sent with an upload.
type UploadMetadata struct {
	Title         string `json:"title"`
	Version       string `json:"version"`
	EffectiveDate string `json:"effective_date"`
	Language      string `json:"language"`
	Category      string `json:"category"`
}

// UploadResponse is the answer to an upload: status "processing" (202) or "unchanged" (200).
type UploadResponse struct {
	DocumentID string `json:"document_id"`
	Version    string `json:"version"`
	Status     string `json:"status"`
}

func (r *UploadResponse) validate() error {
	return oneOf("status", r.Status, "processing", "unchanged")
}

// errorResponse is the contract's error body.
type errorResponse struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func oneOf[S ~string](field string, v S, allowed ...S) error {
	if v == "" {
		return missing(field)
	}
	if !slices.Contains(allowed, v) {
		return fmt.Errorf("%s: %q is not one of %v", field, v, allowed)
	}
	return nil
}

func missing(field string) error { return fmt.Errorf("%s: missing", field) }
