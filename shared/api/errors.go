package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
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
	return &Error{Status: http.StatusBadRequest, Code: request.CodeInvalidRequest, Message: msg, Field: field}
}

var errInternal = classified(request.Internal)

// errTooLarge refuses a body over MaxBody, on every route that reads one.
var errTooLarge = &Error{Status: http.StatusRequestEntityTooLarge, Code: request.CodePayloadTooLarge,
	Message: fmt.Sprintf("request body is larger than %d bytes", MaxBody)}

// statusOf is the HTTP status of each code a service error can cause (request.Classify).
var statusOf = map[string]int{
	request.CodeInvalidRequest:      http.StatusBadRequest,
	request.CodeUnsupportedLanguage: http.StatusBadRequest,
	request.CodeNotFound:            http.StatusNotFound,
	request.CodeUnavailable:         http.StatusServiceUnavailable,
	request.CodeInternal:            http.StatusInternalServerError,
}

// classified is a classified error with its HTTP status.
func classified(e request.Error) *Error {
	return &Error{Status: statusOf[e.Code], Code: e.Code, Field: e.Field, Message: e.Message}
}

// domainError answers a service error as request.Classify classifies it; anything unexpected is
// a 500 whose details stay in the log.
func (h *Handler) domainError(ctx context.Context, c *call, err error) *Error {
	e := request.Classify(err)
	if e.Code == request.CodeInternal {
		h.log.ErrorContext(ctx, "unexpected error", "correlation_id", c.correlationID, "path", c.r.URL.Path,
			"error", port.SafeError(err))
	}
	return classified(e)
}
