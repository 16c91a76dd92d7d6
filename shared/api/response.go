package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// marshal encodes v as compact JSON without HTML escaping, so that "Title > Section" reads as
// written.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

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
