package api

import "net/http"

// Error codes of api.md.
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
