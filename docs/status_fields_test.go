package docs_test

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
)

// TestStatusFieldsAreNamedInAPIDoc: every field a GET /status body can carry (domain.Status and
// the objects it holds, and correlation_id) is named in api.md's GET /status section, so that
// nothing internal (the corpus fingerprint, a cache key) reaches the response unless the page
// says what it is. The OpenAPI test holds the same body to docs/openapi.yaml's schema, which
// allows no other property.
func TestStatusFieldsAreNamedInAPIDoc(t *testing.T) {
	raw, err := os.ReadFile("api.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	start := strings.Index(doc, "\n## GET /status")
	if start < 0 {
		t.Fatal("api.md has no GET /status section")
	}
	section := doc[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	fields := append(jsonFields(reflect.TypeFor[domain.Status]()), "correlation_id")
	for _, f := range fields {
		if !regexp.MustCompile(`["` + "`" + `]` + regexp.QuoteMeta(f) + `["` + "`" + `]`).MatchString(section) {
			t.Errorf("/status carries %q, which api.md's GET /status section does not name", f)
		}
	}
	if len(fields) < 20 {
		t.Errorf("only %d fields found in domain.Status: %v", len(fields), fields)
	}
}

// jsonFields lists the JSON names of a struct's fields and of the structs they hold.
func jsonFields(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeFor[time.Time]() {
		return nil
	}
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			// encoding/json puts an embedded struct's fields in the object itself.
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
		out = append(out, jsonFields(f.Type)...)
	}
	return out
}
