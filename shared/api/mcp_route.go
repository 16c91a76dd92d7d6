package api

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// MCPServer serves the MCP endpoint (POST, GET and DELETE /mcp) for a request the handler has
// authorised like any other route: call holds the actor and the correlation id.
type MCPServer interface {
	ServeMCP(w http.ResponseWriter, r *http.Request, call port.Call)
}

// mcp hands the request to the MCP server as an *http.Request, whatever transport brought it
// (API Gateway event or net/http), and returns what the server wrote. The body is bounded as
// on every route, and a POST's must be one JSON-RPC message (checkMessage); the deadline is the
// request's context. The transport's own refusals (plain text) become the contract's error shape.
func (h *Handler) mcp(ctx context.Context, c *call) (any, *Error) {
	if len(c.req.Body) > MaxBody {
		return nil, errTooLarge
	}
	if c.req.Method == http.MethodPost {
		argErr, err := checkMessage(c)
		if err != nil {
			return nil, err
		}
		if argErr != nil {
			ctx = request.WithArgumentsError(ctx, &request.Error{Code: argErr.Code, Field: argErr.Field, Message: argErr.Message})
		}
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
		if !hopByHop[http.CanonicalHeaderKey(k)] {
			resp.Header[k] = strings.Join(v, ", ")
		}
	}
	return resp, nil
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
	switch bytes.TrimLeft(c.req.Body, " \t\r\n")[0] {
	case '{':
	case '[':
		return nil, invalid("", "a JSON-RPC batch (a JSON array) is not served: send one message per POST")
	default:
		return nil, invalid("", "the body must be one JSON-RPC message, a JSON object")
	}
	err, argErr = checkBodyAt(c.req.Body, "params", "arguments")
	if err != nil || argErr == nil {
		return nil, err
	}
	var m struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(c.req.Body, &m) != nil || m.Method != "tools/call" {
		return nil, argErr
	}
	return argErr, nil
}

// transportError is the contract's error for a refusal of the MCP transport.
func transportError(status int, msg string) *Error {
	code := map[int]string{
		http.StatusBadRequest: request.CodeInvalidRequest, http.StatusForbidden: request.CodeForbidden, http.StatusNotFound: request.CodeNotFound,
		http.StatusMethodNotAllowed: request.CodeMethodNotAllowed, http.StatusRequestEntityTooLarge: request.CodePayloadTooLarge,
		http.StatusUnsupportedMediaType: request.CodeUnsupportedMediaType,
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
