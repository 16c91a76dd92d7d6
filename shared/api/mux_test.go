package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
)

// TestWhatServeMuxWouldAnswerIsTheContracts: the routes are ServeMux patterns, but what the mux
// answers itself never reaches a caller: a path that is not clean is a 404 in the contract's
// shape, never a 301 to its clean form; another method is a 405 with the contract's body and
// Allow (no HEAD beside GET, which the mux would serve as GET); an unknown path is the contract's
// 404, not the mux's plain text. Through the Lambda event and the local server alike.
func TestWhatServeMuxWouldAnswerIsTheContracts(t *testing.T) {
	h, _ := newHandler(t, api.AuthLocalHeaders)
	srv := httptest.NewServer(h.HTTP(5 * time.Second))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	for _, tc := range []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{"GET", api.BasePath + "//status", 404, "not_found", ""},
		{"GET", api.BasePath + "/x/../status", 404, "not_found", ""},
		{"GET", api.BasePath + "/./status", 404, "not_found", ""},
		{"POST", api.BasePath + "/lookup/", 404, "not_found", ""},
		{"HEAD", api.BasePath + "/status", 405, "method_not_allowed", "GET"},
		{"PUT", api.BasePath + "/mcp", 405, "method_not_allowed", "POST, GET, DELETE"},
		{"GET", api.BasePath + "/nothing-here", 404, "not_found", ""},
	} {
		ev := event(tc.method, tc.path, "", nil, map[string]string{"x-actor-id": "agent-7", "x-actor-scope": "knowledge:read"})
		resp, err := h.Lambda(t.Context(), ev)
		if err != nil {
			t.Fatal(err)
		}
		check(t, "lambda "+tc.method+" "+tc.path, resp.StatusCode, resp.Headers["Allow"], resp.Headers["Location"], []byte(resp.Body), tc.status, tc.code, tc.allow)

		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		req.Header.Set("X-Actor-Id", "agent-7")
		req.Header.Set("X-Actor-Scope", "knowledge:read")
		// The client must not clean the path itself: send the request line as written.
		req.URL.Opaque = tc.path
		r, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if tc.method == "HEAD" {
			body = []byte(`{"error":{"code":"method_not_allowed"}}`) // a HEAD answer has no body on the wire
		}
		check(t, "local "+tc.method+" "+tc.path, r.StatusCode, r.Header.Get("Allow"), r.Header.Get("Location"), body, tc.status, tc.code, tc.allow)
	}
}

func check(t *testing.T, name string, status int, allow, location string, body []byte, wantStatus int, wantCode, wantAllow string) {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal(body, &e); err != nil || status != wantStatus || e.Error.Code != wantCode ||
		allow != wantAllow || location != "" || strings.Contains(string(body), "Moved Permanently") {
		t.Errorf("%s: %d %q Allow %q Location %q, want %d %s Allow %q", name, status, body, allow, location, wantStatus, wantCode, wantAllow)
	}
}

// FuzzEventPath: whatever method, raw path and query an event carries, the answer is a JSON body
// of the contract with its correlation id, never a redirect, and only a known route answers
// other than 404 or 405.
func FuzzEventPath(f *testing.F) {
	h, _ := newHandler(f, api.AuthJWT)
	for _, s := range [][3]string{{"GET", api.BasePath + "/status", "language=de"}, {"POST", api.BasePath + "//lookup", ""},
		{"GET", api.BasePath + "/invocations/a%2Fb", ""}, {"HEAD", api.BasePath + "/health", ""}, {"get", "/x/../y", "a;b"},
		{"DELETE", api.BasePath + "/mcp", ""}, {"GET", "", ""}, {"GET", api.BasePath + "/st%61tus", "%zz"}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, method, path, query string) {
		ev := event(method, path, "", reader, nil)
		ev.RawQueryString = query
		resp, err := h.Lambda(t.Context(), ev)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		if json.Unmarshal([]byte(resp.Body), &body) != nil || body["correlation_id"] == nil || resp.Headers["Location"] != "" ||
			resp.StatusCode < 200 || resp.StatusCode >= 300 && resp.StatusCode < 400 {
			t.Fatalf("%s %q ? %q: %d %v %s", method, path, query, resp.StatusCode, resp.Headers, resp.Body)
		}
		if resp.StatusCode != 404 && resp.StatusCode != 405 && !strings.HasPrefix(path, api.BasePath+"/") {
			t.Fatalf("%s %q: %d outside the base path", method, path, resp.StatusCode)
		}
	})
}
