package api_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
)

var fuzzRoutes = []string{"/api/v1/knowledge/lookup", "/api/v1/knowledge/ask", "/api/v1/knowledge/sync-reports", "/api/v1/knowledge/sync"}

var everyScope = map[string]string{"sub": "agent-7", "scope": "knowledge:read knowledge:sync knowledge:sync:report"}

// FuzzRequestBody feeds untrusted bodies to every route that takes one: every answer is a 2xx or
// a 4xx in the contract's shape, never a 5xx, and carries a correlation id. A body that is
// served holds only text (valid UTF-8, no lone surrogate, no control character but tab, CR and
// LF) and no duplicate key.
func FuzzRequestBody(f *testing.F) {
	h, _ := newHandler(f, api.AuthJWT)
	for _, s := range []string{`{"question":"flat tyre","language":"en","top_k":3}`, `{"question":""}`, `[]`, `null`,
		`{"question":"Kratzer","language":"de","top_k":1e99}`, `{"question":"\u0000\ud800"}`, `{"top_k":-1}`, `{`,
		`{"question":"flat tyre","question":"again"}`, `{"question":"a","x":{"y":[{"z":1,"z":2}]}}`,
		`{"question":"dam\u00adage \ufb01ne \ud83d\ude97"}`, "{\"question\":\"\xff\"}", `{"question":"\udc00\ud800"}`,
		`{"run_id":"r-1","language":"en","synced_document_count":1,"failed_document_count":0,"finished_at":"2026-11-29T18:00:00Z"}`,
		`{"language":"all"}`} {
		for route := range fuzzRoutes {
			f.Add(s, uint8(route))
		}
	}
	f.Fuzz(func(t *testing.T, body string, route uint8) {
		path := fuzzRoutes[int(route)%len(fuzzRoutes)]
		resp, _ := call(t, h, event("POST", path, body, everyScope, map[string]string{"content-type": "application/json"}))
		switch {
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			if problem := notText(body); problem != "" {
				t.Fatalf("served a body with %s: %q", problem, body)
			}
			if duplicateKey([]byte(body)) {
				t.Fatalf("served a body with a duplicate key: %q", body)
			}
		case resp.StatusCode >= 400 && resp.StatusCode < 500:
			var e errorBody
			if err := json.Unmarshal([]byte(resp.Body), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("4xx not in the contract's shape: %s", resp.Body)
			}
			if strings.Contains(resp.Body, "json:") || strings.Contains(resp.Body, "Go struct") {
				t.Fatalf("decoder internals leaked: %s", resp.Body)
			}
			if !utf8.ValidString(resp.Body) {
				t.Fatalf("the error is not UTF-8: %q", resp.Body)
			}
		default:
			t.Fatalf("status %d for body %q: %s", resp.StatusCode, body, resp.Body)
		}
	})
}

// notText says what in a JSON body that decodes is not text, from the decoded strings: a
// control character, or a U+FFFD the body does not spell (which is what encoding/json makes of
// invalid UTF-8 and lone surrogates).
func notText(body string) string {
	if !utf8.ValidString(body) {
		return "invalid UTF-8"
	}
	spelt := strings.Contains(body, "\ufffd") || strings.Contains(strings.ToLower(body), `\ufffd`)
	var walk func(v any) string
	walk = func(v any) string {
		switch v := v.(type) {
		case string:
			for _, r := range v {
				if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' {
					return "a control character"
				}
				if r == utf8.RuneError && !spelt {
					return "a replaced lone surrogate"
				}
			}
		case map[string]any:
			for k, x := range v {
				if p := walk(k); p != "" {
					return p
				}
				if p := walk(x); p != "" {
					return p
				}
			}
		case []any:
			for _, x := range v {
				if p := walk(x); p != "" {
					return p
				}
			}
		}
		return ""
	}
	var v any
	if json.Unmarshal([]byte(body), &v) != nil {
		return "" // not JSON: the decoder's own refusal
	}
	return walk(v)
}

// duplicateKey reports whether any object of a JSON body has a key twice.
func duplicateKey(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	var value func() (bool, error)
	value = func() (bool, error) {
		tok, err := dec.Token()
		if err != nil {
			return false, err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return false, err
				}
				if seen[k.(string)] {
					return true, nil
				}
				seen[k.(string)] = true
				if dup, err := value(); dup || err != nil {
					return dup, err
				}
			}
			_, err = dec.Token()
			return false, err
		case json.Delim('['):
			for dec.More() {
				if dup, err := value(); dup || err != nil {
					return dup, err
				}
			}
			_, err = dec.Token()
			return false, err
		}
		return false, nil
	}
	dup, err := value()
	return dup && (err == nil || !errors.Is(err, io.EOF))
}
