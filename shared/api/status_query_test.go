package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
)

// TestStatusRefusesWhatItDoesNotDefine: GET /status's one parameter is language; an unknown,
// repeated or malformed one is 400 invalid_request naming it, through both transports, and never
// an answer in the default language.
func TestStatusRefusesWhatItDoesNotDefine(t *testing.T) {
	t.Parallel()
	admin := map[string]string{"sub": "ops-1", "scope": "knowledge:read"}
	f := fakes{}
	h := api.New(api.Services{Lookup: f, Status: f, Sync: f}, api.AuthJWT, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	local := api.New(api.Services{Lookup: f, Status: f, Sync: f}, api.AuthLocalHeaders, slog.New(slog.NewJSONHandler(io.Discard, nil))).
		HTTP(5 * time.Second)
	many := strings.Repeat("x=1&", 10000) + "language=de"
	for _, tc := range []struct{ query, field, says string }{
		{"language=de;x=1", "language", `"language=de;x=1"`},
		{"language=de&", "", "trailing"},
		{"&language=de", "", "stray"},
		{"as_of=", "as_of", `"as_of"`},
		{"as_of=2027-01-01&language=de", "as_of", `"as_of"`},
		{"refresh=true", "refresh", `"refresh"`},
		{"language=de&language=en", "language", "more than once"},
		{"language=%zz", "language", "escape"},
		{many, "x", `"x"`},
		{"a=1&b=1&c=1&d=1&e=1&f=1&g=1", "a", "and 2 more"},
		{"language=%0B", "language", "control character"},
		{"language=de%00", "language", "NUL"},
	} {
		ev := event("GET", "/api/v1/knowledge/status", "", admin, nil)
		ev.RawQueryString = tc.query
		resp, body := call(t, h, ev)
		e, _ := body["error"].(map[string]any)
		field, _ := e["field"].(string)
		msg, _ := e["message"].(string)
		if resp.StatusCode != http.StatusBadRequest || e["code"] != "invalid_request" || field != tc.field || !strings.Contains(msg, tc.says) {
			t.Errorf("?%.40s: %d %s", tc.query, resp.StatusCode, resp.Body)
		}
		req := httptest.NewRequest(http.MethodGet, "/api/v1/knowledge/status?"+tc.query, nil)
		req.Header.Set("X-Actor-Id", "ops-1")
		req.Header.Set("X-Actor-Scope", "knowledge:read")
		w := httptest.NewRecorder()
		local.ServeHTTP(w, req)
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"invalid_request"`) {
			t.Errorf("local ?%.40s: %d %s", tc.query, w.Code, w.Body.String())
		}
	}
	for _, ok := range []string{"", "language=de", "language=en"} {
		ev := event("GET", "/api/v1/knowledge/status", "", admin, nil)
		ev.RawQueryString = ok
		resp, body := call(t, h, ev)
		// Past the query, the fake status service fails (500): the query itself was accepted.
		if resp.StatusCode == http.StatusBadRequest {
			t.Errorf("?%s: %d %v", ok, resp.StatusCode, body)
		}
	}
}
