package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
)

// FuzzRequestBody feeds untrusted bodies to POST /lookup and /ask: every answer is a 200 or a
// 4xx in the contract's shape, never a 5xx, and carries a correlation id.
func FuzzRequestBody(f *testing.F) {
	h, _ := newHandler(f, api.AuthJWT)
	for _, s := range []string{`{"question":"flat tyre","language":"en","top_k":3}`, `{"question":""}`, `[]`, `null`,
		`{"question":"Kratzer","language":"de","top_k":1e99}`, `{"question":"\u0000\ud800"}`, `{"top_k":-1}`, `{`} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, body string, lookup bool) {
		path := "/api/v1/knowledge/ask"
		if lookup {
			path = "/api/v1/knowledge/lookup"
		}
		resp, body2 := call(t, h, event("POST", path, body, reader, map[string]string{"content-type": "application/json"}))
		switch {
		case resp.StatusCode == 200:
			if _, ok := body2["evidence_state"]; !ok {
				t.Fatalf("200 without evidence_state: %s", resp.Body)
			}
		case resp.StatusCode >= 400 && resp.StatusCode < 500:
			var e errorBody
			if err := json.Unmarshal([]byte(resp.Body), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("4xx not in the contract's shape: %s", resp.Body)
			}
			if strings.Contains(resp.Body, "json:") || strings.Contains(resp.Body, "Go struct") {
				t.Fatalf("decoder internals leaked: %s", resp.Body)
			}
		default:
			t.Fatalf("status %d for body %q: %s", resp.StatusCode, body, resp.Body)
		}
	})
}
