package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// answerUnserved answers a JSON-RPC request for a method the endpoint does not serve (see
// served) with the JSON-RPC error -32601 at once, before the SDK reads it, and reports whether
// it did. The SDK checks a known method's params before any middleware runs, so that
// subscriptions/listen without params would be an HTTP 400 instead of the promised -32601; with
// or without params, the answer is the same. Anything else (a served method, a notification, a
// body that is not one request) is left to the SDK, with the body as it came.
func answerUnserved(w http.ResponseWriter, r *http.Request) bool {
	b, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil {
		return false
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(b, &msg) != nil || len(msg.ID) == 0 || !strings.ContainsAny(string(msg.ID[:1]), `"-0123456789`) || msg.Method == "" ||
		served[msg.Method] || strings.HasPrefix(msg.Method, "notifications/") {
		return false
	}
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: msg.ID, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{Code: int(errNotServed.Code), Message: "method not found: " + strconv.Quote(msg.Method)}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return true
}
