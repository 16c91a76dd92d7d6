package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
)

// fixed is a mock of the three services that returns the results it holds.
type fixed struct {
	result lookup.Result
	answer lookup.Answer
	status domain.Status
}

func (f *fixed) Lookup(context.Context, lookup.LookupRequest) (lookup.Result, error) {
	return f.result, nil
}

func (f *fixed) Ask(context.Context, lookup.AskRequest) (lookup.Answer, error) {
	return f.answer, nil
}

func (f *fixed) Status(context.Context, string, port.Call) (domain.Status, error) {
	return f.status, nil
}

// filled returns a T whose every exported field, at every depth, holds a value: strings,
// numbers and booleans that are not zero, slices and maps of one filled element, pointers to
// filled values. Every optional member (omitempty, omitzero, a pointer) is then encoded, so a
// schema that does not describe one fails on it.
func filled[T any]() T {
	var v T
	fill(reflect.ValueOf(&v).Elem(), 0)
	return v
}

func fill(v reflect.Value, depth int) {
	if depth > 10 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("text")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(2)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(2)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

// results are the kinds of results each tool can return: every evidence state, as filled as
// the types allow (relevance.alternatives included) and as empty as a service leaves them (no
// primary block, null lists, no optional member).
func results() map[string]*fixed {
	out := map[string]*fixed{}
	for _, state := range []port.EvidenceState{port.StateGrounded, port.StateInsufficient, port.StateUnavailable} {
		full := &fixed{result: filled[lookup.Result](), answer: filled[lookup.Answer](), status: filled[domain.Status]()}
		full.result.EvidenceState, full.answer.EvidenceState = state, state
		out[string(state)+", every member"] = full
		empty := &fixed{}
		empty.result.EvidenceState, empty.answer.EvidenceState = state, state
		out[string(state)+", no optional member"] = empty
	}
	// As services return them: an insufficient lookup whose evidence points to two procedures,
	// a grounded one without alternatives, empty lists rather than null.
	alt := &fixed{result: lookup.Result{EvidenceState: port.StateInsufficient, Supplement: []lookup.EvidenceBlock{},
		EvidenceBlocks: []lookup.EvidenceBlock{}, Relevance: lookup.Relevance{Assessment: "weak", Basis: "semantic+lexical",
			Alternatives: []lookup.Alternative{
				{DocumentID: "lost-and-found", Title: "Lost and found items", Source: "procedures/en/lost-and-found.md#4-x", FavouredBy: []string{retrieval.PathSemantic}},
				{DocumentID: "child-locked-in", Title: "Child locked in", Source: "procedures/en/child.md#1-y", FavouredBy: []string{retrieval.PathLexical, retrieval.PathFrontMatter}},
			},
			Clarification: &lookup.Clarification{Question: "Is this about lost and found items or child locked in?",
				Options: []lookup.Option{
					{Procedure: "lost-and-found", Title: "Lost and found items", Situation: "Lost and found items: left behind"},
					{Procedure: "child-locked-in", Title: "Child locked in", Situation: "Child locked in"},
				}}}},
		answer: lookup.Answer{EvidenceState: port.StateInsufficient, Sources: []port.AnswerSource{}},
		status: domain.Status{Verification: domain.Verification{VerificationResult: domain.VerificationResult{Missing: []string{}}}}}
	out["insufficient, alternatives as a service writes them"] = alt
	return out
}

// Every tool's structuredContent validates against the outputSchema it publishes, for every
// kind of result, with a validator that is not the one the SDK uses: as published, and closed
// (no member the schema does not describe), so that a member the schema forgets fails too.
func TestStructuredContentMatchesOutputSchema(t *testing.T) {
	t.Parallel()
	for name, f := range results() {
		srv := New(Services{Lookup: f, Ask: f, Status: f}, "test", slog.New(slog.NewTextHandler(io.Discard, nil)))
		call := port.Call{Actor: port.Actor{ID: "agent-1", Scopes: []string{"knowledge:read"}}, CorrelationID: "corr-1"}
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { srv.ServeMCP(w, r, call) }))
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).
			Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: hs.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		tools, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(tools.Tools) != 3 {
			t.Fatalf("%d tools", len(tools.Tools))
		}
		for _, tool := range tools.Tools {
			published := testutil.JSONSchema(t, tool.OutputSchema, false)
			closed := testutil.JSONSchema(t, tool.OutputSchema, true)
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool.Name,
				Arguments: map[string]any{"question": "q", "language": "en"}})
			if tool.Name == ToolStatus {
				res, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool.Name, Arguments: map[string]any{"language": "en"}})
			}
			if err != nil || res.IsError {
				t.Fatalf("%s, %s: %v %+v", name, tool.Name, err, res)
			}
			raw, _ := json.Marshal(res.StructuredContent)
			if err := published(res.StructuredContent); err != nil {
				t.Errorf("%s, %s: structured content does not match the published output schema: %v\n%s", name, tool.Name, err, raw)
			}
			if err := closed(res.StructuredContent); err != nil {
				t.Errorf("%s, %s: a member the output schema does not describe: %v\n%s", name, tool.Name, err, raw)
			}
		}
		cs.Close()
		hs.Close()
	}
}

// The published output schemas name what a model acts on: ask_knowledge's answer, the three
// evidence states, the alternatives and what to do with them; they leave objects open to the
// members a later deployment may add.
func TestOutputSchemas(t *testing.T) {
	t.Parallel()
	for _, f := range []func() (*sdk.Tool, error){lookupTool, askTool, statusTool} {
		tool, err := f()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(tool.OutputSchema)
		var s struct {
			Type       string                     `json:"type"`
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(b, &s); err != nil || s.Type != "object" || s.Properties["correlation_id"] == nil {
			t.Errorf("%s: output schema %s", tool.Name, b)
		}
		if strings.Contains(string(b), `"additionalProperties":false`) || strings.Contains(string(b), `"additionalProperties":{"not":{}}`) {
			t.Errorf("%s: the output schema closes an object: %s", tool.Name, b)
		}
		switch tool.Name {
		case ToolAsk:
			if s.Properties["answer"] == nil || !strings.Contains(strings.Join(s.Required, " "), "answer") {
				t.Errorf("ask_knowledge's output schema has no answer: %s", b)
			}
		case lookup.ToolLookup:
			for _, want := range []string{`"enum":["grounded","insufficient","unavailable"]`, `"alternatives"`, `"clarification"`, "relevance.clarification"} {
				if !strings.Contains(string(b), want) {
					t.Errorf("lookup_knowledge's output schema lacks %s", want)
				}
			}
		}
		var in map[string]any
		if err := json.Unmarshal(tool.InputSchema.(json.RawMessage), &in); err != nil || in["type"] != "object" {
			t.Errorf("%s: input schema: %v", tool.Name, err)
		}
	}
}

// When the evidence points to several procedures, the tool tells the model to relay the
// clarification to the operator and send the chosen option back as procedure: in the tool's
// description, in the server's instructions and in the text rendering, which quotes the question
// and lists the options; an insufficient answer without a clarification asks nothing.
func TestClarificationIsRelayedAndSentBack(t *testing.T) {
	t.Parallel()
	tool, err := lookupTool()
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"description": tool.Description, "instructions": instructions} {
		if !strings.Contains(text, "relevance.clarification") || !strings.Contains(text, "procedure") ||
			!strings.Contains(text, "grounded") {
			t.Errorf("the %s do not say what a clarification asks for: %q", what, text)
		}
	}
	if !strings.Contains(tool.Description, "The clarifying turn") || !strings.Contains(tool.Description, "only grounded is a promise to act on") {
		t.Errorf("description %q", tool.Description)
	}
	f := results()["insufficient, alternatives as a service writes them"]
	text := lookupText(f.result)
	for _, want := range []string{"Lost and found items (lost-and-found, favoured by semantic)",
		"Child locked in (child-locked-in, favoured by lexical and front_matter)", "Ask the operator which situation applies",
		`"Is this about lost and found items or child locked in?"`, `procedure "lost-and-found": Lost and found items: left behind`,
		`procedure "child-locked-in": Child locked in`} {
		if !strings.Contains(text, want) {
			t.Errorf("text %q lacks %q", text, want)
		}
	}
	plain := lookupText(lookup.Result{EvidenceState: port.StateInsufficient})
	if strings.Contains(plain, "several procedures") || strings.Contains(plain, "Ask the operator") {
		t.Errorf("an insufficient lookup without a clarification asks something: %q", plain)
	}
}

// The text rendering names each complement with the words it covers, warns when it is weak, and
// quotes its block among the first three.
func TestComplementsAreRendered(t *testing.T) {
	t.Parallel()
	blk := func(doc, sec string) lookup.EvidenceBlock {
		return lookup.EvidenceBlock{DocumentID: doc, Breadcrumb: doc + " > " + sec, Source: "procedures/en/" + doc + ".md#" + sec,
			Version: "1.0", Content: "content of " + doc + " " + sec}
	}
	blocks := []lookup.EvidenceBlock{blk("breakdown-assistance", "2"), blk("vehicle-cleaning", "5"), blk("breakdown-assistance", "3")}
	r := lookup.Result{EvidenceState: port.StateGrounded, Primary: &blocks[0], EvidenceBlocks: blocks,
		Relevance: lookup.Relevance{Complements: []lookup.Complement{
			{DocumentID: "vehicle-cleaning", Title: "Vehicle cleaning", Source: "procedures/en/vehicle-cleaning.md#5", Covers: []string{"dog", "hair"}, Assessment: "strong"},
			{DocumentID: "lost-and-found", Title: "Lost and found items", Source: "procedures/en/lost-and-found.md#2", Covers: []string{"wallet", "pocket"}, Assessment: "weak"},
		}}}
	text := lookupText(r)
	for _, want := range []string{"Vehicle cleaning (vehicle-cleaning) answers it (dog, hair; procedures/en/vehicle-cleaning.md#5).",
		"Lost and found items (lost-and-found) answers it (wallet, pocket; procedures/en/lost-and-found.md#2), but weakly",
		"Block 2: vehicle-cleaning > 5", "content of vehicle-cleaning 5"} {
		if !strings.Contains(text, want) {
			t.Errorf("text %q lacks %q", text, want)
		}
	}
}
