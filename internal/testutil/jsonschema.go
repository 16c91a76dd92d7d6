package testutil

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// JSONSchema compiles schema (any value that encodes to a JSON Schema: the schema's JSON, a
// decoded map, a *jsonschema.Schema of another library) with an independent validator, draft
// 2020-12 unless the schema names its own, and returns a function that validates the JSON
// encoding of an instance against it. closed adds "additionalProperties": false to every object
// schema that names its properties and says nothing about others, so that a member the schema
// does not describe fails too.
func JSONSchema(t testing.TB, schema any, closed bool) func(instance any) error {
	t.Helper()
	doc, err := decodeJSON(schema)
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	if closed {
		closeObjects(doc)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem:///schema.json", doc); err != nil {
		t.Fatalf("schema: %v", err)
	}
	sch, err := c.Compile("mem:///schema.json")
	if err != nil {
		t.Fatalf("compile the schema: %v", err)
	}
	return func(instance any) error {
		v, err := decodeJSON(instance)
		if err != nil {
			return err
		}
		return sch.Validate(v)
	}
}

// decodeJSON encodes v (unless it is JSON already) and decodes it as the validator reads JSON.
func decodeJSON(v any) (any, error) {
	var b []byte
	switch x := v.(type) {
	case json.RawMessage:
		b = x
	case []byte:
		b = x
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

// closeObjects adds "additionalProperties": false wherever a schema has properties and no
// additionalProperties, at any depth.
func closeObjects(v any) {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["properties"]; ok {
			if _, ok := x["additionalProperties"]; !ok {
				x["additionalProperties"] = false
			}
		}
		for _, c := range x {
			closeObjects(c)
		}
	case []any:
		for _, c := range x {
			closeObjects(c)
		}
	}
}
