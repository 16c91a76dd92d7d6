package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
)

// TestScopeClaimForms: the scopes of a token arrive in its scope claim, or in scp, either
// space-separated or, when the token holds an array, flattened by API Gateway to
// "[a b]". Every form admits exactly the scopes it names, the first and the last of an array
// included; nothing else does.
func TestScopeClaimForms(t *testing.T) {
	h, _ := newHandler(t, api.AuthJWT)
	status := func(claims map[string]string) int {
		resp, _ := call(t, h, event("GET", "/api/v1/knowledge/status", "", claims, nil))
		return resp.StatusCode
	}
	sync := func(claims map[string]string) int {
		resp, _ := call(t, h, event("POST", "/api/v1/knowledge/sync", `{"language":"en"}`, claims, nil))
		return resp.StatusCode
	}
	for _, tc := range []struct {
		name         string
		claims       map[string]string
		read, syncOK bool
	}{
		{"space-separated", map[string]string{"scope": "knowledge:read knowledge:sync"}, true, true},
		{"flattened array", map[string]string{"scope": "[knowledge:read knowledge:sync]"}, true, true},
		{"flattened array of one", map[string]string{"scope": "[knowledge:sync]"}, false, true},
		{"flattened array, the scope last", map[string]string{"scope": "[openid profile knowledge:read]"}, true, false},
		{"JSON text of an array", map[string]string{"scope": `["knowledge:read","knowledge:sync"]`}, true, true},
		{"scp, flattened", map[string]string{"scp": "[knowledge:read knowledge:sync]"}, true, true},
		{"scp, space-separated", map[string]string{"scp": "knowledge:read"}, true, false},
		{"scope and scp", map[string]string{"scope": "openid", "scp": "[knowledge:sync]"}, false, true},
		{"padded", map[string]string{"scope": "  [ knowledge:read ]  "}, true, false},
		{"empty array", map[string]string{"scope": "[]"}, false, false},
		{"unbalanced bracket", map[string]string{"scope": "[knowledge:read"}, false, false},
		{"bracket inside a word", map[string]string{"scope": "knowledge:read]"}, false, false},
		{"a longer scope", map[string]string{"scope": "knowledge:reader knowledge:sync:report"}, false, false},
		{"another claim", map[string]string{"groups": "[knowledge:read knowledge:sync]"}, false, false},
	} {
		tc.claims["sub"] = "ops-1"
		want := func(ok bool) int {
			if ok {
				return http.StatusOK
			}
			return http.StatusForbidden
		}
		if got := status(tc.claims); got != want(tc.read) {
			t.Errorf("%s %v: GET /status %d, want %d", tc.name, tc.claims, got, want(tc.read))
		}
		if got := sync(tc.claims); got != want(tc.syncOK) {
			t.Errorf("%s %v: POST /sync %d, want %d", tc.name, tc.claims, got, want(tc.syncOK))
		}
	}

	// knowledge:admin, last in a flattened array, reads another actor's invocation.
	_, body := call(t, h, event("POST", "/api/v1/knowledge/lookup", `{"question":"flat tyre on the motorway","language":"en"}`, reader, nil))
	id, _ := body["invocation_id"].(string)
	for claim, want := range map[string]int{"[knowledge:read knowledge:admin]": 200, "[knowledge:admin]": 200, "[knowledge:read]": 404} {
		resp, _ := call(t, h, event("GET", "/api/v1/knowledge/invocations/"+id, "", map[string]string{"sub": "auditor-1", "scope": claim}, nil))
		if resp.StatusCode != want {
			t.Errorf("another actor's invocation with scope %s: %d, want %d", claim, resp.StatusCode, want)
		}
	}
}

// TestScopeClaimFormsInAWSPayload: the JWT authorizer payload that ships with aws-lambda-go, its
// claims as API Gateway hands on an array claim (flattened) and its scopes list absent (null,
// as the gateway often sends it), is admitted by the scopes it names.
func TestScopeClaimFormsInAWSPayload(t *testing.T) {
	raw := awsJWTPayload(t)
	hd := h(t)
	entry := hd.LambdaWithSchedule(nil)
	for claims, want := range map[string]int{
		`"scope": "[knowledge:sync knowledge:read]"`: 200,
		`"scp": "[knowledge:read]"`:                  200,
		`"scope": "knowledge:sync knowledge:read"`:   200,
		`"scope": "[knowledge:sync]"`:                403,
	} {
		// The payload's own claims and scopes, replaced in its JSON text, as the runtime delivers it.
		ev := strings.Replace(string(raw), `"claim1": "value1",`, `"sub": "console-1", `+claims+`,`, 1)
		ev = strings.Replace(ev, `"scopes": [
                    "scope1",
                    "scope2"
                ]`, `"scopes": null`, 1)
		ev = strings.Replace(ev, `"rawPath": "/my/path"`, `"rawPath": "/api/v1/knowledge/status"`, 1)
		ev = strings.Replace(ev, `"rawQueryString": "parameter1=value1&parameter1=value2&parameter2=value"`, `"rawQueryString": "language=de"`, 1)
		if !strings.Contains(ev, `"scopes": null`) || !strings.Contains(ev, "console-1") || !strings.Contains(ev, "language=de") {
			t.Fatal("the aws-lambda-go sample payload changed; adapt the replacements")
		}
		res, err := entry(t.Context(), json.RawMessage(ev))
		if err != nil {
			t.Fatal(err)
		}
		r, ok := res.(events.APIGatewayV2HTTPResponse)
		if !ok || r.StatusCode != want {
			t.Errorf("claims %s: %+v, want %d", claims, res, want)
		}
	}
}
