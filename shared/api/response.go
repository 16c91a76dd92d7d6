package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
)

// marshal encodes a response body (request.Marshal).
func marshal(v any) ([]byte, error) { return request.Marshal(v) }

type errorBody struct {
	Error         *Error `json:"error"`
	CorrelationID string `json:"correlation_id"`
}

func (h *Handler) errorResponse(c *call, e *Error) Response {
	r := h.jsonResponse(c, e.Status, errorBody{Error: e, CorrelationID: c.correlationID})
	if len(c.allow) > 0 {
		r.Header["Allow"] = strings.Join(c.allow, ", ")
	}
	return r
}

// jsonResponse encodes v, adding correlation_id to it: v is a struct whose JSON form is an
// object, or a map.
func (h *Handler) jsonResponse(c *call, status int, v any) Response {
	body, err := marshal(v)
	if err != nil {
		h.log.Error("encode response", "correlation_id", c.correlationID, "error", err)
		status = http.StatusInternalServerError
		body, _ = json.Marshal(errorBody{Error: errInternal, CorrelationID: c.correlationID})
	}
	return Response{Status: status, Body: body, Header: map[string]string{
		"Content-Type":     "application/json",
		"X-Correlation-Id": c.correlationID,
		"Cache-Control":    "no-store",
	}}
}
