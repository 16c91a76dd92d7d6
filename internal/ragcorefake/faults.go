package ragcorefake

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Faults are the failures the server injects, so a client's handling of each can be tested.
// The zero value injects nothing. When several are set, a request first waits Latency, then gets
// the first that applies of: FailNext, ErrorRate, Malformed, WrongShape, HugeBody; SlowBody
// slows down whatever real answer is left.
type Faults struct {
	// Paths are the path prefixes ("/v1/documents", "/v1/retrieve", "/v1/answer",
	// "/v1/sources/", "/v1/health") the faults apply to; empty means every path.
	Paths []string
	// Latency is a wait before answering. A request whose context ends meanwhile gets nothing.
	Latency time.Duration
	// ErrorRate is the share (0..1) of requests answered with ErrorStatus (default 500).
	ErrorRate   float64
	ErrorStatus int
	// FailNext answers the next N matching requests with FailStatus (default 503).
	FailNext   int
	FailStatus int
	// RetryAfter is sent as Retry-After with every injected error. A 429 always carries one:
	// "1" when this is empty.
	RetryAfter string
	// Malformed answers 200 with a body that is not JSON.
	Malformed bool
	// WrongShape answers 200 with valid JSON whose fields have the wrong types.
	WrongShape bool
	// SlowBody sends the status, headers and half the real body, then waits this long (or until
	// the request ends) before the rest.
	SlowBody time.Duration
	// HugeBody answers 200 with valid JSON of at least this many bytes.
	HugeBody int
	// HealthStatus is what /v1/health reports: "ok" when empty, or "degraded". It is a state of
	// the service rather than a fault of a request, so Paths does not limit it.
	HealthStatus string
}

func (f *Faults) applies(path string) bool {
	if len(f.Paths) == 0 {
		return true
	}
	for _, p := range f.Paths {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// plan is what the faults decide for one request. It is drawn once, under the lock, when the
// request arrives, so FailNext and the seeded ErrorRate source count requests in arrival order.
type plan struct {
	latency    time.Duration
	status     int // an injected error status, or 0
	retryAfter string
	malformed  bool
	wrongShape bool
	hugeBody   int
	slowBody   time.Duration
}

func (s *Server) planLocked(path string) plan {
	f := &s.faults
	if !f.applies(path) {
		return plan{}
	}
	p := plan{
		latency: f.Latency, retryAfter: f.RetryAfter, malformed: f.Malformed,
		wrongShape: f.WrongShape, hugeBody: f.HugeBody, slowBody: f.SlowBody,
	}
	// Draw on every matching request, failing or not, so the random sequence depends on the
	// seed and the request order alone.
	randomFailure := f.ErrorRate > 0 && s.rng.Float64() < f.ErrorRate
	switch {
	case s.failNext > 0:
		s.failNext--
		p.status = cmp.Or(f.FailStatus, http.StatusServiceUnavailable)
	case randomFailure:
		p.status = cmp.Or(f.ErrorStatus, http.StatusInternalServerError)
	}
	if p.status == http.StatusTooManyRequests && p.retryAfter == "" {
		p.retryAfter = "1"
	}
	return p
}

// sleep waits d or until ctx ends, and reports whether the full wait happened.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// malformedBody looks like the start of a real answer and then stops, which is how a body cut
// by a proxy or a crash arrives.
const malformedBody = `{"documents": [{"document_id": "rc-doc-1", "status": "act`

// wrongShapes are valid JSON with each endpoint's field names and wrong types, so only a client
// that checks types notices.
var wrongShapes = map[string]string{
	"health":    `{"status": 1}`,
	"documents": `{"documents": {"document_id": 123, "status": true, "active_version": "1.3"}}`,
	"retrieve":  `{"score_semantics": 1, "candidates": [{"source_id": 7, "score": "high", "rank": "first", "breadcrumb": "a > b"}]}`,
	"answer":    `{"answer": 42, "evidence_state": ["grounded"], "citations": "none"}`,
	"upload":    `{"document_id": 7, "version": 1.3, "status": false}`,
}

// validMinimal are each endpoint's smallest valid answers, the tail of a HugeBody.
var validMinimal = map[string]string{
	"health":    `"status":"ok"`,
	"documents": `"documents":[]`,
	"retrieve":  `"score_semantics":"cosine_similarity","candidates":[]`,
	"answer":    `"answer":"","evidence_state":"insufficient","citations":[]`,
	"upload":    `"document_id":"rc-doc-0","version":"0","status":"processing"`,
}

// writeHuge streams a valid JSON object of at least size bytes. The padding comes first, so a
// client reading through a size limit gets truncated JSON rather than a lucky complete value.
func writeHuge(w http.ResponseWriter, endpoint string, size int) {
	head, tail := `{"padding":"`, `",`+validMinimal[endpoint]+`}`
	pad := max(size-len(head)-len(tail), 0)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(head)+pad+len(tail)))
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write([]byte(head)); err != nil {
		return
	}
	chunk := []byte(strings.Repeat("x", 32<<10))
	for pad > 0 {
		n := min(pad, len(chunk))
		if _, err := w.Write(chunk[:n]); err != nil {
			return
		}
		pad -= n
	}
	_, _ = w.Write([]byte(tail))
}

// writeSlow sends half of body, flushes it so the client really has it, and sends the rest after
// d, or never if the request ends first.
func writeSlow(w http.ResponseWriter, r *http.Request, status int, body []byte, d time.Duration) {
	setJSONHeaders(w, len(body))
	w.WriteHeader(status)
	half := len(body) / 2
	if _, err := w.Write(body[:half]); err != nil {
		return
	}
	_ = http.NewResponseController(w).Flush()
	if !sleep(r.Context(), d) {
		return
	}
	_, _ = w.Write(body[half:])
}

func setJSONHeaders(w http.ResponseWriter, n int) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(n))
}

// errorCodes are the codes of the error bodies the faults inject.
var errorCodes = map[int]string{
	http.StatusBadRequest:          "invalid_request",
	http.StatusUnauthorized:        "unauthorized",
	http.StatusForbidden:           "forbidden",
	http.StatusNotFound:            "not_found",
	http.StatusConflict:            "conflict",
	http.StatusTooManyRequests:     "rate_limited",
	http.StatusInternalServerError: "internal_error",
	http.StatusBadGateway:          "bad_gateway",
	http.StatusServiceUnavailable:  "unavailable",
	http.StatusGatewayTimeout:      "gateway_timeout",
}

func injectedError(status int) errorResponse {
	code, ok := errorCodes[status]
	if !ok {
		code = "error_" + strconv.Itoa(status)
	}
	return errorResponse{Error: errorBody{Code: code, Message: "injected fault: " + http.StatusText(status)}}
}

// marshal is json.Marshal for values the fake builds itself, which always encode.
func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(`{"error":{"code":"internal_error","message":"encode response"}}`)
	}
	return b
}
