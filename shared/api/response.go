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

// fail answers e, logging a server-side failure (5xx) by its code.
func (h *Handler) fail(w http.ResponseWriter, c *call, e *Error) {
	if e.Status >= 500 {
		c.log.ErrorContext(c.r.Context(), "request failed", "code", e.Code)
	}
	h.writeError(w, c, e)
}

// writeError answers e in the contract's error shape, with Allow when the path takes other
// methods.
func (h *Handler) writeError(w http.ResponseWriter, c *call, e *Error) {
	if len(c.allow) > 0 {
		w.Header().Set("Allow", strings.Join(c.allow, ", "))
	}
	h.writeJSON(w, c, e.Status, errorBody{Error: e, CorrelationID: c.correlationID})
}

// writeJSON answers v, a struct whose JSON form is an object (correlation_id among its
// members), or a map; an OPTIONS answer carries the path's methods as Allow too.
func (h *Handler) writeJSON(w http.ResponseWriter, c *call, status int, v any) {
	body, err := marshal(v)
	if err != nil {
		h.log.Error("encode response", "correlation_id", c.correlationID, "error", err)
		status = http.StatusInternalServerError
		body, _ = json.Marshal(errorBody{Error: errInternal, CorrelationID: c.correlationID})
	}
	if o, ok := v.(optionsResponse); ok {
		w.Header().Set("Allow", strings.Join(o.Allow, ", "))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Correlation-Id", c.correlationID)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if _, err := w.Write(body); err != nil {
		h.log.Debug("write response", "correlation_id", c.correlationID, "error", err)
	}
}

// statusWriter remembers the status a route answered, for the request's log line.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes, deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush sends what was written (the MCP server flushes its response).
func (w *statusWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }
