package api

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// MCPServer serves the MCP endpoint (POST, GET and DELETE /mcp) for a request the handler has
// authorised like any other route: call holds the actor and the correlation id.
type MCPServer interface {
	ServeMCP(w http.ResponseWriter, r *http.Request, call port.Call)
}

// mcp hands the request to the MCP server as an *http.Request, whatever transport brought it
// (API Gateway event or net/http), and returns what the server wrote. The body is bounded as
// on every route; the deadline is the request's context. The transport's own refusals (plain
// text) become the contract's error shape.
func (h *Handler) mcp(ctx context.Context, c *call) (any, *Error) {
	if len(c.req.Body) > MaxBody {
		return nil, &Error{Status: http.StatusRequestEntityTooLarge, Code: CodePayloadTooLarge,
			Message: fmt.Sprintf("request body is larger than %d bytes", MaxBody)}
	}
	r, err := http.NewRequestWithContext(ctx, c.req.Method, "http://mcp"+c.req.Path, bytes.NewReader(c.req.Body))
	if err != nil {
		return nil, invalid("", "the request cannot be served")
	}
	for k, v := range c.req.Header {
		r.Header.Set(k, v)
	}
	r.Host = cmp.Or(c.req.Header["host"], "mcp")
	w := &recorder{header: http.Header{}}
	h.mcpServer.ServeMCP(w, r, port.Call{Actor: c.actor, CorrelationID: c.correlationID})
	if w.status == 0 {
		w.status = http.StatusOK
	}
	mt, _, _ := mime.ParseMediaType(w.header.Get("Content-Type"))
	if w.status >= 400 && mt != "application/json" {
		if w.status == http.StatusMethodNotAllowed {
			c.allow = strings.Split(w.header.Get("Allow"), ", ")
		}
		return nil, transportError(w.status, strings.TrimSpace(w.body.String()))
	}
	resp := Response{Status: w.status, Header: map[string]string{}, Body: w.body.Bytes()}
	for k, v := range w.header {
		resp.Header[k] = strings.Join(v, ", ")
	}
	return resp, nil
}

// transportError is the contract's error for a refusal of the MCP transport.
func transportError(status int, msg string) *Error {
	code := map[int]string{
		http.StatusBadRequest: CodeInvalidRequest, http.StatusForbidden: CodeForbidden, http.StatusNotFound: CodeNotFound,
		http.StatusMethodNotAllowed: CodeMethodNotAllowed, http.StatusRequestEntityTooLarge: CodePayloadTooLarge,
		http.StatusUnsupportedMediaType: CodeUnsupportedMediaType,
	}[status]
	if code == "" {
		return errInternal
	}
	return &Error{Status: status, Code: code, Message: textproc.Clip(msg, 200)}
}

// recorder is the http.ResponseWriter the MCP server writes its one JSON response into.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// Flush does nothing: the whole response is returned at once.
func (w *recorder) Flush() {}
