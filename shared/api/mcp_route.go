package api

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
)

// MCPServer serves the MCP endpoint (POST, GET and DELETE /mcp) for a request the handler has
// authorised like any other route: call holds the actor and the correlation id.
type MCPServer interface {
	ServeMCP(w http.ResponseWriter, r *http.Request, call port.Call)
}

// mcp hands the request to the MCP server as it is, with the body the handler read; the
// deadline is the request's context. The body is bounded as on every route, and a POST's must be
// one JSON-RPC message (checkMessage). The server writes its one JSON response through mcpWriter,
// which turns the transport's own refusals (plain text) into the contract's error shape.
func (h *Handler) mcp(w http.ResponseWriter, c *call) {
	if len(c.body) > MaxBody {
		h.fail(w, c, errTooLarge)
		return
	}
	ctx := c.r.Context()
	if c.r.Method == http.MethodPost {
		argErr, err := checkMessage(c)
		if err != nil {
			h.fail(w, c, err)
			return
		}
		if argErr != nil {
			ctx = request.WithArgumentsError(ctx, &request.Error{Code: argErr.Code, Field: argErr.Field, Message: argErr.Message})
		}
	}
	r := c.r.WithContext(ctx)
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(c.body)), int64(len(c.body))
	w.Header().Set("X-Correlation-Id", c.correlationID)
	mw := &mcpWriter{w: w, header: http.Header{}}
	h.mcpServer.ServeMCP(mw, r, port.Call{Actor: c.actor, CorrelationID: c.correlationID})
	switch {
	case mw.refused:
		if mw.status == http.StatusMethodNotAllowed {
			c.allow = strings.Split(mw.header.Get("Allow"), ", ")
		}
		h.fail(w, c, transportError(mw.status, r.Method, c.allow))
	case mw.status == 0: // nothing written: an empty 200
		mw.WriteHeader(http.StatusOK)
	}
}

// mcpWriter passes the MCP server's response on, with no-store and without the headers of one
// connection; a refusal of the transport (4xx or 5xx that is not JSON) is kept back for the
// handler to answer in the contract's shape, its text dropped.
type mcpWriter struct {
	w       http.ResponseWriter
	header  http.Header // the server's headers, until the status is written
	status  int
	refused bool
}

func (m *mcpWriter) Header() http.Header { return m.header }

func (m *mcpWriter) WriteHeader(status int) {
	if m.status != 0 {
		return
	}
	m.status = status
	mt, _, _ := mime.ParseMediaType(m.header.Get("Content-Type"))
	if status >= 400 && mt != "application/json" {
		m.refused = true
		return
	}
	for k, v := range m.header {
		if !hopByHop[http.CanonicalHeaderKey(k)] {
			m.w.Header()[k] = v
		}
	}
	m.w.Header().Set("Cache-Control", "no-store")
	m.w.WriteHeader(status)
}

func (m *mcpWriter) Write(b []byte) (int, error) {
	m.WriteHeader(http.StatusOK)
	if m.refused {
		return len(b), nil // the SDK's text never reaches the client
	}
	return m.w.Write(b)
}

// Flush sends what was written, unless it is a refusal still to be answered.
func (m *mcpWriter) Flush() {
	if m.status != 0 && !m.refused {
		_ = http.NewResponseController(m.w).Flush()
	}
}

// hopByHop are the headers of one connection, which the SDK sets for a stream and the response
// of a whole request must not carry (the local server and the gateway frame it themselves).
var hopByHop = map[string]bool{"Connection": true, "Keep-Alive": true, "Transfer-Encoding": true, "Upgrade": true}

// checkMessage refuses a POST body that is not one JSON-RPC message before the MCP server reads
// it, with the codes and messages of the HTTP routes: the checks of every JSON body (checkJSON,
// checkBody: text, duplicate keys, depth, nothing after the message). A batch (a JSON array) is
// refused whatever protocol version the client names: the specification removed batching
// (2025-06-18), and one POST must not buy hundreds of calls.
//
// A problem inside a tools/call's arguments is argErr, named as the HTTP route names the same
// member of its body: the tool answers it as its own error (isError), which the model sees and can
// correct, as it does for every other bad argument. Anywhere else it is err, a 400.
func checkMessage(c *call) (argErr, err *Error) {
	if err := checkJSON(c); err != nil {
		return nil, err
	}
	switch bytes.TrimLeft(c.body, " \t\r\n")[0] {
	case '{':
	case '[':
		return nil, invalid("", "a JSON-RPC batch (a JSON array) is not served: send one message per POST")
	default:
		return nil, invalid("", "the body must be one JSON-RPC message, a JSON object")
	}
	err, argErr = checkBodyAt(c.body, "params", "arguments")
	if err != nil || argErr == nil {
		return nil, err
	}
	var m struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(c.body, &m) != nil || m.Method != "tools/call" {
		return nil, argErr
	}
	return argErr, nil
}

// transportError is the contract's error for a refusal of the MCP transport (a status the SDK
// answered with plain text): the API's own message for each, never the SDK's text.
func transportError(status int, method string, allow []string) *Error {
	switch status {
	case http.StatusBadRequest:
		return &Error{Status: status, Code: request.CodeInvalidRequest,
			Message: "not a request of the MCP streamable HTTP transport: POST one JSON-RPC message as application/json, with an Accept that admits application/json and text/event-stream"}
	case http.StatusForbidden:
		return &Error{Status: status, Code: request.CodeForbidden, Message: "the MCP transport refuses this request's origin"}
	case http.StatusNotFound:
		return &Error{Status: status, Code: request.CodeNotFound, Message: "no such MCP session"}
	case http.StatusMethodNotAllowed:
		return &Error{Status: status, Code: request.CodeMethodNotAllowed,
			Message: "method " + method + " is not allowed here; use " + strings.Join(allow, ", ")}
	case http.StatusRequestEntityTooLarge:
		return errTooLarge
	case http.StatusUnsupportedMediaType:
		return &Error{Status: status, Code: request.CodeUnsupportedMediaType, Message: "Content-Type must be application/json"}
	}
	return errInternal
}
