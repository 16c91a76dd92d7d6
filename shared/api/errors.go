package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// Error codes of the API contract (docs/openapi.yaml).
const (
	CodeInvalidRequest       = "invalid_request"
	CodeUnsupportedLanguage  = "unsupported_language"
	CodeUnauthorized         = "unauthorized"
	CodeForbidden            = "forbidden"
	CodeNotFound             = "not_found"
	CodePayloadTooLarge      = "payload_too_large"
	CodeUnsupportedMediaType = "unsupported_media_type"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodeInternal             = "internal"
	CodeUnavailable          = "unavailable"
)

// Error is a client-facing error: its message is safe to show (no internals).
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func invalid(field, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Message: msg, Field: field}
}

var errInternal = &Error{Status: http.StatusInternalServerError, Code: CodeInternal,
	Message: "internal error; quote the correlation_id when reporting it"}

// domainError maps service errors to responses; anything unexpected is a 500 whose details stay
// in the log.
func (h *Handler) domainError(ctx context.Context, c *call, err error) *Error {
	switch {
	case errors.Is(err, domain.ErrUnsupportedLanguage):
		return &Error{Status: http.StatusBadRequest, Code: CodeUnsupportedLanguage, Field: "language",
			Message: "supported languages: " + strings.Join(textproc.Languages, ", ")}
	case errors.Is(err, domain.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: "not found"}
	case errors.Is(err, port.ErrUnavailable):
		return &Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, Message: "the knowledge provider is unavailable"}
	}
	h.log.ErrorContext(ctx, "unexpected error", "correlation_id", c.correlationID, "path", c.req.Path, "error", err)
	return errInternal
}
