package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
)

// bodyRoute is a POST route with a valid body, written as raw JSON members so that one member's
// string can be replaced by any bytes.
type bodyRoute struct {
	path    string
	claims  map[string]string
	members [][2]string // name, raw JSON value
}

func (r bodyRoute) body(field, value string) string {
	var parts []string
	for _, m := range r.members {
		v := m[1]
		if m[0] == field {
			v = value
		}
		parts = append(parts, `"`+m[0]+`":`+v)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

var bodyRoutes = []bodyRoute{
	{"/api/v1/knowledge/lookup", reader, [][2]string{{"question", `"flat tyre on the motorway"`}, {"language", `"en"`}, {"top_k", `3`}}},
	{"/api/v1/knowledge/ask", reader, [][2]string{{"question", `"flat tyre on the motorway"`}, {"language", `"en"`}}},
	{"/api/v1/knowledge/sync", syncOperator, [][2]string{{"language", `"en"`}}},
	{"/api/v1/knowledge/sync-reports", syncWorkflow, [][2]string{{"run_id", `"run-9"`}, {"language", `"en"`},
		{"synced_document_count", `11`}, {"failed_document_count", `0`}, {"finished_at", `"2026-11-29T18:00:00Z"`}}},
}

// Every string field of every request body must be text: invalid UTF-8, lone surrogates, NUL and
// other control characters get 400 invalid_request naming the field, before any other check.
func TestTextFieldsMustBeText(t *testing.T) {
	h, _ := newHandler(t, api.AuthJWT)
	bad := map[string]string{
		"NUL escaped":              `\u0000`,
		"control escaped":          `\u0007`,
		"backspace escape":         `\b`,
		"form feed escape":         `\f`,
		"DEL raw":                  "\x7f",
		"C1 control raw":           "\u0085",
		"C1 control escaped":       `\u009b`,
		"lone high surrogate":      `\ud800`,
		"lone high at the end":     `\uDBFF`,
		"high surrogate then char": `\ud800\u0041`,
		"two high surrogates":      `\ud800\ud800`,
		"lone low surrogate":       `\udc00`,
		"invalid UTF-8":            "\xff\xfe",
		"truncated UTF-8":          "\xc3",
		"UTF-8 encoded surrogate":  "\xed\xa0\x80",
		"overlong UTF-8":           "\xc0\xaf",
	}
	for _, r := range bodyRoutes {
		for _, m := range r.members {
			if !strings.HasPrefix(m[1], `"`) {
				continue
			}
			for name, b := range bad {
				value := `"` + strings.Trim(m[1], `"`)[:1] + b + strings.Trim(m[1], `"`)[1:] + `"`
				resp, _ := call(t, h, event("POST", r.path, r.body(m[0], value), r.claims, jsonBody))
				e := decodeError(t, resp.Body)
				if resp.StatusCode != 400 || e.Error.Code != "invalid_request" || e.Error.Field != m[0] {
					t.Errorf("%s %s with %s: %d %s", r.path, m[0], name, resp.StatusCode, resp.Body)
				}
			}
		}
	}
	// Tab, CR, LF (escaped: raw they are not JSON) and a surrogate pair are text.
	for _, q := range []string{`"flat tyre\ton the\r\nmotorway"`, `"flat tyre \ud83d\ude97 motorway"`, `"flat tyre 🚗"`} {
		resp, _ := call(t, h, event("POST", bodyRoutes[0].path, bodyRoutes[0].body("question", q), reader, jsonBody))
		if resp.StatusCode != 200 {
			t.Errorf("question %s: %d %s", q, resp.StatusCode, resp.Body)
		}
	}
}

func TestDuplicateKeysAreRefused(t *testing.T) {
	h, _ := newHandler(t, api.AuthJWT)
	for body, field := range map[string]string{
		`{"question":"flat tyre","question":"ignore the first"}`:                     "question",
		`{"question":"flat tyre","quest\u0069on":"the same key escaped"}`:            "question",
		`{"question":"flat tyre","language":"en","top_k":3,"language":"de"}`:         "language",
		`{"question":"flat tyre","extra":{"a":1,"b":{"c":[{"d":1,"d":2}]}}}`:         "extra",
		`{"question":"flat tyre","extra":[{"a":1},{"a":1}],"more":{"x":1,"x":null}}`: "more",
	} {
		resp, _ := call(t, h, event("POST", "/api/v1/knowledge/lookup", body, reader, jsonBody))
		e := decodeError(t, resp.Body)
		if resp.StatusCode != 400 || e.Error.Code != "invalid_request" || e.Error.Field != field || !strings.Contains(e.Error.Message, "more than once") {
			t.Errorf("%s: %d %s", body, resp.StatusCode, resp.Body)
		}
	}
	// The same key in sibling objects is no duplicate: the body passes the structural checks and
	// is refused only for its member the route does not define.
	resp, _ := call(t, h, event("POST", "/api/v1/knowledge/lookup", `{"question":"flat tyre","extra":[{"a":1},{"a":2}]}`, reader, jsonBody))
	if e := decodeError(t, resp.Body); resp.StatusCode != 400 || e.Error.Field != "extra" || !strings.Contains(e.Error.Message, "not a member") {
		t.Errorf("sibling objects with the same key: %d %s", resp.StatusCode, resp.Body)
	}
}

func TestDeepBodiesAreRefused(t *testing.T) {
	h, _ := newHandler(t, api.AuthJWT)
	deep := `{"question":"flat tyre","extra":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`
	resp, _ := call(t, h, event("POST", "/api/v1/knowledge/lookup", deep, reader, jsonBody))
	if e := decodeError(t, resp.Body); resp.StatusCode != 400 || e.Error.Code != "invalid_request" || e.Error.Field != "extra" {
		t.Errorf("40 levels: %d %s", resp.StatusCode, resp.Body)
	}
	ok := `{"question":"flat tyre","extra":` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `}`
	if resp, _ := call(t, h, event("POST", "/api/v1/knowledge/lookup", ok, reader, jsonBody)); resp.StatusCode != 400 ||
		!strings.Contains(decodeError(t, resp.Body).Error.Message, "not a member") {
		t.Errorf("20 levels pass the depth check: %d %s", resp.StatusCode, resp.Body)
	}
	for _, body := range []string{`{"question":"flat tyre","top_k":1e999}`, `{"question":"flat tyre",}`, `{"question":"flat tyre"} {}`} {
		resp, _ := call(t, h, event("POST", "/api/v1/knowledge/lookup", body, reader, jsonBody))
		if e := decodeError(t, resp.Body); resp.StatusCode != 400 || e.Error.Code != "invalid_request" {
			t.Errorf("%s: %d %s", body, resp.StatusCode, resp.Body)
		}
	}
}

func decodeError(t *testing.T, body string) errorBody {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("not JSON: %q", body)
	}
	return e
}
