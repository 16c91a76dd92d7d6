// Package ragcore owns the RAGcore v1 contract (docs/ragcore.md): a typed client for every endpoint,
// the allow-list of managed sources, the exact identity verification rule and the
// RAGcoreKnowledgeProvider built on them. A change on RAGcore's side touches this package alone.
package ragcore

import (
	"bytes"
	"context"
	cryptorand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// Error classes (port's, and RAGcore's own "rejected"). They name what went wrong without
// RAGcore's message, a URL or a token, so they are safe for traces, logs and metrics.
const (
	ClassTimeout      = port.ClassTimeout      // the deadline passed
	ClassUnavailable  = port.ClassUnavailable  // not reachable, 5xx, or 429 until the deadline
	ClassUnauthorized = port.ClassUnauthorized // 401 or 403: the token or the namespace is refused
	ClassBadResponse  = port.ClassBadResponse  // not JSON, wrong shape, too large, or an unexpected status
	ClassRejected     = "rejected"             // 400, 404 or 409: RAGcore refused the request itself
	ClassCanceled     = port.ClassCanceled     // the caller went away
	// ClassCircuitOpen: the circuit breaker is open (or half-open with its probe out), so the
	// call failed at once without reaching RAGcore.
	ClassCircuitOpen = port.ErrorClassCircuitOpen
)

// Error is a failed RAGcore call.
type Error struct {
	Op     string // "retrieve", "answer", "documents", "upload", "health"
	Class  string
	Status int    // HTTP status, 0 when no response came
	Code   string // the contract error code when RAGcore sent one
	err    error
	// unreachable marks a RAGcore that cannot be reached at all: connection refused, name
	// resolution failed, 503 until the retries gave up, or the circuit breaker is open. Such an
	// error is port.ErrUnavailable (errors.Is), so the service reports l1.status
	// "unavailable" rather than "failed".
	unreachable bool
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ragcore %s: %s", e.Op, e.Class)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d", e.Status)
		if e.Code != "" {
			b.WriteString(" " + e.Code)
		}
		b.WriteString(")")
	}
	if e.err != nil {
		b.WriteString(": " + port.SafeError(e.err))
	}
	return b.String()
}

// ErrorClass returns the class of a RAGcore error for traces: one of the Class constants.
func (e *Error) ErrorClass() string { return e.Class }

func (e *Error) Unwrap() error { return e.err }

// Is makes an unreachable RAGcore's error port.ErrUnavailable.
func (e *Error) Is(target error) bool { return e.unreachable && target == port.ErrUnavailable }

// Actor is the caller on whose behalf a request is made: every request names it to RAGcore.
type Actor struct {
	ID            string
	Scopes        []string
	CorrelationID string
}

// Options configure a Client.
type Options struct {
	BaseURL   string
	Token     string
	Namespace domain.Namespace
	// Timeout bounds one HTTP attempt from dial to the last byte; the caller's context bounds the
	// whole call, retries included. Zero means config.DefaultRAGcoreTimeout.
	Timeout time.Duration
	// MaxAttempts is the number of attempts for a 429 or 503 (default 3).
	MaxAttempts int
	// MaxResponseBytes is the largest response body read (default 4 MiB).
	MaxResponseBytes int64
	// HTTPClient replaces the client NewHTTPClient would build (for instrumentation).
	HTTPClient *http.Client
	// Breaker configures the circuit breaker around every call (see BreakerOptions).
	Breaker BreakerOptions
	// Log receives the breaker's state changes, at warn; nil discards them.
	Log *slog.Logger
	// Metrics receives BreakerOpen (1 open or half-open, 0 closed) at every state change; nil
	// records nothing.
	Metrics domain.Metrics
}

// Client calls RAGcore. It is safe for concurrent use; build one per cold start.
type Client struct {
	base    *url.URL
	token   string
	ns      domain.Namespace
	http    *http.Client
	retries int
	limit   int64
	sleep   func(context.Context, time.Duration) error
	jitter  func(time.Duration) time.Duration
	breaker *circuit
}

// NewHTTPClient returns the HTTP client for RAGcore: a dial and TLS handshake bounded by the
// smaller of timeout and two seconds, and timeout for a whole attempt.
func NewHTTPClient(timeout time.Duration) *http.Client {
	connect := min(timeout, 2*time.Second)
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = connect
	t.ResponseHeaderTimeout = timeout
	t.MaxIdleConnsPerHost = 64
	t.Proxy = nil // RAGcore is reached directly; a proxy from the environment would see the token
	return &http.Client{Timeout: timeout, Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// New builds a client. BaseURL and Token are required.
func New(o Options) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(o.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("ragcore: base URL must be an http or https URL")
	}
	if o.Token == "" {
		return nil, errors.New("ragcore: a bearer token is required")
	}
	if o.Namespace.Tenant == "" || o.Namespace.Workspace == "" || o.Namespace.Collection == "" {
		return nil, errors.New("ragcore: tenant, workspace and collection are required")
	}
	if o.Timeout <= 0 {
		o.Timeout = config.DefaultRAGcoreTimeout
	}
	c := &Client{base: u, token: o.Token, ns: o.Namespace, http: o.HTTPClient, retries: o.MaxAttempts,
		limit: o.MaxResponseBytes, sleep: sleepCtx, jitter: fullJitter, breaker: newBreaker(o.Breaker, o.Log, o.Metrics)}
	if c.http == nil {
		c.http = NewHTTPClient(o.Timeout)
	}
	if c.retries <= 0 {
		c.retries = 3
	}
	if c.limit <= 0 {
		c.limit = 4 << 20
	}
	return c, nil
}

// BreakerOpen reports whether the circuit breaker refuses calls (open, or half-open with its
// probe out): RAGcore failed repeatedly and calls fail fast with ClassCircuitOpen.
func (c *Client) BreakerOpen() bool { return c.breaker.open() }

// Health calls GET /v1/health.
func (c *Client) Health(ctx context.Context, a Actor) (HealthResponse, error) {
	var r HealthResponse
	err := c.do(ctx, "health", http.MethodGet, "/v1/health", nil, a, nil, &r)
	return r, err
}

// Documents calls GET /v1/documents, the exact identity lookup of one source.
func (c *Client) Documents(ctx context.Context, a Actor, sourceID, externalID string) (DocumentsResponse, error) {
	q := url.Values{"source_id": {sourceID}, "external_id": {externalID}}
	var r DocumentsResponse
	err := c.do(ctx, "documents", http.MethodGet, "/v1/documents?"+q.Encode(), nil, a, nil, &r)
	return r, err
}

// Retrieve calls POST /v1/retrieve.
func (c *Client) Retrieve(ctx context.Context, a Actor, req RetrieveRequest) (RetrieveResponse, error) {
	var r RetrieveResponse
	err := c.do(ctx, "retrieve", http.MethodPost, "/v1/retrieve", req, a, nil, &r)
	return r, err
}

// Answer calls POST /v1/answer.
func (c *Client) Answer(ctx context.Context, a Actor, req AnswerRequest) (AnswerResponse, error) {
	var r AnswerResponse
	err := c.do(ctx, "answer", http.MethodPost, "/v1/answer", req, a, nil, &r)
	return r, err
}

// Upload calls PUT /v1/sources/{source_id}/documents/{external_id}: 202 "processing" or
// 200 "unchanged".
func (c *Client) Upload(ctx context.Context, a Actor, sourceID, externalID string, req UploadRequest) (UploadResponse, error) {
	var r UploadResponse
	path := "/v1/sources/" + url.PathEscape(sourceID) + "/documents/" + url.PathEscape(externalID)
	err := c.do(ctx, "upload", http.MethodPut, path, req, a, []int{http.StatusOK, http.StatusAccepted}, &r)
	return r, err
}

type validator interface{ validate() error }

// do sends one request through the circuit breaker (see breaker.go) and retries it as call does.
func (c *Client) do(ctx context.Context, op, method, path string, body any, a Actor, okStatus []int, out validator) error {
	done, err := c.breaker.allow(op)
	if err != nil {
		return err
	}
	err = c.call(ctx, op, method, path, body, a, okStatus, out)
	done(err)
	return err
}

// call sends one request, retrying 429 and 503 with jittered exponential backoff while the
// context's deadline allows, honouring Retry-After; it decodes and validates a 2xx body into out.
//
// The outcome of a call that failed is decided by one rule, so that the same failure of RAGcore
// always gets the same class whatever the timing: the last attempt's outcome, except that an
// attempt that timed out (the caller's deadline or the per-attempt timeout) defers to the HTTP
// error answer of an attempt before it.
// RAGcore answering 503 until the deadline is thus "unavailable" (HTTP 503) whether the retries
// ended by their count, by a wait that would pass the deadline, or by the deadline passing
// during a retry; it is "timeout" only when no attempt got an HTTP answer at all. A caller that
// went away is "canceled" in every case.
func (c *Client) call(ctx context.Context, op, method, path string, body any, a Actor, okStatus []int, out validator) error {
	if a.CorrelationID == "" {
		a.CorrelationID = "ragcore-" + strings.ToLower(cryptorand.Text()) // every request is traceable on both sides
	}
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return &Error{Op: op, Class: ClassRejected, err: err}
		}
	}
	var answered *Error // the last attempt that got an HTTP status
	for attempt := 1; ; attempt++ {
		status, retryAfter, err := c.attempt(ctx, op, method, path, payload, a, okStatus, out)
		if err == nil {
			return nil
		}
		if err.Class == ClassTimeout {
			if answered != nil {
				return finish(answered) // the deadline ended the retries: RAGcore's last answer stands
			}
		} else if status != 0 {
			answered = err
		}
		if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable || attempt >= c.retries {
			return finish(err)
		}
		wait := c.jitter(backoff(attempt))
		wait = max(wait, retryAfter)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
			return finish(err) // the wait alone would pass the deadline: give up now rather than late
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			if errors.Is(serr, context.Canceled) {
				return &Error{Op: op, Class: ClassCanceled, err: serr}
			}
			return finish(err)
		}
	}
}

// finish marks the final error of a call: RAGcore that refused the connection, could not be
// resolved, or answered 503 to the end cannot be reached at all (port.ErrUnavailable).
func finish(e *Error) error {
	if e.Class == ClassUnavailable && (e.Status == 0 || e.Status == http.StatusServiceUnavailable) {
		e.unreachable = true
	}
	return e
}

func (c *Client) attempt(ctx context.Context, op, method, path string, payload []byte, a Actor, okStatus []int, out validator) (status int, retryAfter time.Duration, err *Error) {
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, rerr := http.NewRequestWithContext(ctx, method, c.base.String()+path, rd)
	if rerr != nil {
		return 0, 0, &Error{Op: op, Class: ClassRejected, err: rerr}
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("X-RAGcore-Tenant", c.ns.Tenant)
	req.Header.Set("X-RAGcore-Workspace", c.ns.Workspace)
	req.Header.Set("X-Actor-Id", a.ID)
	req.Header.Set("X-Actor-Scope", strings.Join(a.Scopes, " "))
	req.Header.Set("X-Correlation-Id", a.CorrelationID)
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, derr := c.http.Do(req)
	if derr != nil {
		return 0, 0, &Error{Op: op, Class: transportClass(ctx, derr), err: derr}
	}
	defer resp.Body.Close()
	raw, berr := io.ReadAll(io.LimitReader(resp.Body, c.limit+1))
	if berr != nil {
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			// The status is RAGcore's answer; a body cut short does not change it.
			return resp.StatusCode, 0, &Error{Op: op, Class: statusClass(resp.StatusCode), Status: resp.StatusCode, err: berr}
		}
		return resp.StatusCode, 0, &Error{Op: op, Class: transportClass(ctx, berr), Status: resp.StatusCode, err: berr}
	}
	if int64(len(raw)) > c.limit {
		return resp.StatusCode, 0, &Error{Op: op, Class: ClassBadResponse, Status: resp.StatusCode,
			err: fmt.Errorf("response body over %d bytes", c.limit)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &Error{Op: op, Class: statusClass(resp.StatusCode), Status: resp.StatusCode}
		var eb errorResponse
		if json.Unmarshal(raw, &eb) == nil {
			e.Code = clipCode(eb.Error.Code)
		}
		return resp.StatusCode, parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()), e
	}
	if okStatus != nil && !slices.Contains(okStatus, resp.StatusCode) || okStatus == nil && resp.StatusCode != http.StatusOK {
		return resp.StatusCode, 0, &Error{Op: op, Class: ClassBadResponse, Status: resp.StatusCode,
			err: errors.New("unexpected success status")}
	}
	if derr := decodeStrict(raw, out); derr != nil {
		return resp.StatusCode, 0, &Error{Op: op, Class: ClassBadResponse, Status: resp.StatusCode, err: derr}
	}
	return resp.StatusCode, 0, nil
}

// decodeStrict decodes exactly one JSON value into out and validates it: trailing data, wrong
// types and missing required fields are all errors.
func decodeStrict(raw []byte, out validator) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("decode: data after the JSON value")
	}
	return out.validate()
}

func statusClass(status int) string {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ClassUnauthorized
	case status == http.StatusTooManyRequests || status >= 500:
		return ClassUnavailable
	case status == http.StatusBadRequest || status == http.StatusNotFound || status == http.StatusConflict:
		return ClassRejected
	}
	return ClassBadResponse
}

func transportClass(ctx context.Context, err error) string {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return ClassTimeout
	case errors.Is(ctx.Err(), context.Canceled):
		return ClassCanceled
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ClassTimeout
	}
	return ClassUnavailable
}

// backoff is the base wait before attempt n+1: 100 ms, 200 ms, 400 ms, ... at most 2 s.
func backoff(attempt int) time.Duration {
	return min(100*time.Millisecond<<(attempt-1), 2*time.Second)
}

// fullJitter picks a wait in [d/2, d], so that clients that failed together do not retry together.
func fullJitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}

// parseRetryAfter reads Retry-After as seconds or an HTTP date; anything else is no hint.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// clipCode keeps an error code short and printable: it comes from the peer and reaches logs.
func clipCode(code string) string {
	code = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.' {
			return r
		}
		return -1
	}, code)
	if len(code) > 40 {
		code = code[:40]
	}
	return code
}
