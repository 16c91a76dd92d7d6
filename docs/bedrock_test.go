package docs_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite docs/bedrock-lookup.yaml from docs/openapi.yaml")

const bedrockFile = "bedrock-lookup.yaml"

// TestBedrockLookupSchema keeps bedrock-lookup.yaml, the lookup operation as an Amazon Bedrock
// Agents action group takes it (OpenAPI 3.0.0, no enum), derived from openapi.yaml: the same
// operationId, descriptions, request limits and response fields. Rewrite it with
// `go test ./docs -run TestBedrockLookupSchema -update`.
func TestBedrockLookupSchema(t *testing.T) {
	src, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var spec map[string]any
	if err := yaml.Unmarshal(src, &spec); err != nil {
		t.Fatal(err)
	}
	want := bedrockLookup(t, spec)
	if *update {
		if err := os.WriteFile(bedrockFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(bedrockFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not what openapi.yaml gives; rewrite it with go test ./docs -run TestBedrockLookupSchema -update", bedrockFile)
	}
	if bytes.Contains(got, []byte("enum:")) || !bytes.HasPrefix(got, []byte("openapi: 3.0.0\n")) {
		t.Errorf("%s must be OpenAPI 3.0.0 without enum", bedrockFile)
	}

	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(got)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("%s is not a valid OpenAPI 3.0 document: %v", bedrockFile, err)
	}
	op := doc.Paths.Find("/lookup").Post
	if op.OperationID == "" || op.Description == "" {
		t.Fatal("the lookup operation needs an operationId and a description")
	}

	// Real lookup responses (grounded, and insufficient with a null primary), and a request at
	// the limits, match the derived schemas.
	svc := newService(t, nil)
	for _, q := range []string{`{` + question + `,"top_k":20}`, `{"question":"What is the capital of France?","language":null}`} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", origin+basePath+"/lookup", strings.NewReader(q))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Actor-Id", "agent-7")
		req.Header.Set("X-Actor-Scope", reader)
		svc.http.ServeHTTP(rec, req)
		var body any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		if err := op.Responses.Status(200).Value.Content.Get("application/json").Schema.Value.VisitJSON(body); err != nil {
			t.Errorf("a real lookup response does not match %s: %v", bedrockFile, err)
		}
	}
	var request any
	json.Unmarshal([]byte(`{"question":"`+strings.Repeat("x", 2000)+`","language":null,"top_k":20}`), &request)
	if err := op.RequestBody.Value.Content.Get("application/json").Schema.Value.VisitJSON(request); err != nil {
		t.Errorf("a request at the limits does not match %s: %v", bedrockFile, err)
	}
}

// bedrockLookup derives the Bedrock action group schema of POST /lookup from the spec: its
// request, 200 and 400 response schemas inlined, 3.1 nullability written as 3.0's nullable, and
// each enum moved into the description, which is where Bedrock wants allowed values. Its servers
// are the spec's; its security is none (`security: []`): an action group calls its Lambda
// function, which takes no token, and the agent's own role is what admits it.
func bedrockLookup(t *testing.T, spec map[string]any) []byte {
	t.Helper()
	schemas := dig(spec, "components", "schemas").(map[string]any)
	op := dig(spec, "paths", "/lookup", "post").(map[string]any)
	reqSchema := dig(op, "requestBody", "content", "application/json", "schema")
	ok := dig(op, "responses", "200").(map[string]any)
	okSchema := dig(ok, "content", "application/json", "schema")
	bad := dig(spec, "components", "responses", "BadRequest").(map[string]any)
	badSchema := dig(bad, "content", "application/json", "schema")
	info := spec["info"].(map[string]any)
	license := info["license"].(map[string]any)
	// A struct keeps openapi, info, servers, security and paths first, in that order; maps below
	// are sorted.
	out := struct {
		OpenAPI  string         `yaml:"openapi"`
		Info     map[string]any `yaml:"info"`
		Servers  any            `yaml:"servers"`
		Security []any          `yaml:"security"`
		Paths    map[string]any `yaml:"paths"`
	}{
		OpenAPI: "3.0.0",
		Info: map[string]any{
			"title":   info["title"].(string) + ": lookup_knowledge action group",
			"version": info["version"],
			"description": "POST /lookup of openapi.yaml for an Amazon Bedrock Agents action group (OpenAPI 3.0.0, allowed " +
				"values in the descriptions). Generated: go test ./docs -run TestBedrockLookupSchema -update.",
			"license": map[string]any{"name": license["name"]}, // 3.0 has no license identifier
		},
		Servers:  spec["servers"],
		Security: []any{},
		Paths: map[string]any{"/lookup": map[string]any{"post": map[string]any{
			"operationId": op["operationId"],
			"summary":     op["summary"],
			"description": op["description"],
			"requestBody": map[string]any{"required": true, "content": map[string]any{
				"application/json": map[string]any{"schema": to30(t, schemas, reqSchema)}}},
			"responses": map[string]any{
				"200": map[string]any{"description": ok["description"], "content": map[string]any{
					"application/json": map[string]any{"schema": to30(t, schemas, okSchema)}}},
				"400": map[string]any{"description": bad["description"], "content": map[string]any{
					"application/json": map[string]any{"schema": to30(t, schemas, badSchema)}}},
			},
		}}},
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(out); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// to30 inlines the references of a 3.1 schema and writes it as a 3.0 schema without enum.
func to30(t *testing.T, schemas map[string]any, v any) any {
	t.Helper()
	switch s := v.(type) {
	case []any:
		out := make([]any, len(s))
		for i, e := range s {
			out[i] = to30(t, schemas, e)
		}
		return out
	case map[string]any:
		if ref, ok := s["$ref"].(string); ok {
			target := schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
			if target == nil {
				t.Fatalf("unresolved %s", ref)
			}
			inlined := to30(t, schemas, target).(map[string]any)
			if d, ok := s["description"]; ok {
				inlined["description"] = d
			}
			return inlined
		}
		out := map[string]any{}
		nullable := false
		for k, e := range s {
			switch k {
			case "enum", "const", "examples":
			case "type":
				types, ok := e.([]any)
				if !ok {
					out[k] = e
					continue
				}
				for _, ty := range types {
					if ty == "null" {
						nullable = true
					} else {
						out[k] = ty
					}
				}
			case "oneOf":
				// oneOf [schema, {type: null}] is the schema, nullable.
				var rest []any
				for _, alt := range e.([]any) {
					if m, ok := alt.(map[string]any); ok && len(m) == 1 && m["type"] == "null" {
						nullable = true
					} else {
						rest = append(rest, alt)
					}
				}
				if len(rest) == 1 {
					for k2, v2 := range to30(t, schemas, rest[0]).(map[string]any) {
						if _, set := out[k2]; !set {
							out[k2] = v2
						}
					}
				} else {
					out[k] = to30(t, schemas, rest)
				}
			default:
				out[k] = to30(t, schemas, e)
			}
		}
		if enum, ok := s["enum"].([]any); ok {
			var values []string
			for _, e := range enum {
				if e != nil {
					values = append(values, fmt.Sprint(e))
				}
			}
			d, _ := out["description"].(string)
			out["description"] = strings.TrimSpace(strings.TrimSpace(d) + " Allowed values: " + strings.Join(values, ", ") + ".")
		}
		if nullable {
			out["nullable"] = true
		}
		return out
	}
	return v
}
