package mcp

import (
	"encoding/json"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// instructions tell a client's model how the tools fit together.
const instructions = "MobilityOps Knowledge: evidence from the versioned fleet-operations procedures " +
	"(damage, bookings, fines, vehicles, customers). Call lookup_knowledge before answering any operational " +
	"question, and answer only from the evidence blocks it returns, citing document_id, version and section. " +
	"Act only on evidence_state grounded. When it is insufficient and relevance.clarification is present, relay " +
	"its question to the operator as it is, then call the same tool again with the same question and procedure " +
	"set to the option the operator chose. When evidence_state is not grounded, do not answer from general knowledge."

const evidenceStateDoc = "grounded: the blocks answer the question; this is the promise to act on: answer from " +
	"them and cite them. " +
	"insufficient: the evidence does not settle the question; the blocks are returned, but they must not be taken as " +
	"the answer and the question must not be answered from general knowledge: say that the procedures do not cover it, " +
	"or ask for details. " +
	"unavailable: no evidence could be retrieved now; say so and answer nothing procedural."

const alternativesDoc = "Present when the evidence points to several procedures and none is decisive (evidence_state " +
	"is then insufficient): each competing procedure, with the evidence paths that favour it (semantic, lexical, " +
	"front_matter). Never present for a question the procedures do not cover. Do not act on any of them: relay " +
	"relevance.clarification's question to the operator, then look up again with procedure set to the chosen option."

// clarifyDoc explains the clarifying turn to a client's model.
const clarifyDoc = " The clarifying turn: when evidence_state is insufficient and relevance.clarification is present, " +
	"relay clarification.question to the operator as it is (it is in the question's language and names each " +
	"situation); when the operator chooses, call this tool again with the same question and procedure set to the " +
	"chosen option's procedure. That call considers only the confirmed procedure (relevance.basis confirmed): " +
	"grounded when its sections answer the question, the answering section first; insufficient when they do not, " +
	"and then the procedures do not cover the question. Without clarification, an insufficient answer has nothing " +
	"to choose between: say the procedures do not cover the question."

const lookupDescription = "Look up the fleet-operations procedures for evidence that answers a question " +
	"(damage handling, bookings, fines, vehicle and customer issues). Call it before answering any operational " +
	"question, with the question in the agent's or customer's own words. Returns ranked evidence blocks quoted " +
	"verbatim from the versioned procedures: primary is the best block, supplement the others, each with its " +
	"source, document_id, version, effective_date and section for citation. evidence_state says what the blocks " +
	"support: " + evidenceStateDoc + " only grounded is a promise to act on." + clarifyDoc +
	" invocation_id identifies the recorded trace of the call." + nextVersionDoc

const askDescription = "Get a short answer to an operational question built only from the procedures' passages, " +
	"with its sources. Prefer lookup_knowledge when you will write the answer yourself; use this when a ready, " +
	"quoted answer is wanted. answer_kind says how the text was made (template: extracted passages, nothing " +
	"generated). evidence_state: " + evidenceStateDoc + " relevance is the lookup's judgement, with its " +
	"clarification." + clarifyDoc + nextVersionDoc

const statusDescription = "Report the state of the procedures index for one language: how many source documents " +
	"there are, the last sync report, and whether the indexed count was verified (document_count is null and " +
	"statistics_state unavailable when it could not be verified). Call it to explain missing or stale evidence, " +
	"not to answer operational questions."

// The tools' input schemas, written from the rules of the request fields (request: the longest
// question, top_k's range and default) and the supported languages (textproc.Languages), so that
// a tool announces what its arguments are checked against.
var (
	questionInput = fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "question": {"type": "string", "minLength": 1, "maxLength": %d,
      "description": "The operational question in natural language, as asked (English or German)."},
    "language": {"type": ["string", "null"], "enum": [%s, null],
      "description": "Language of the question and of the procedures to search. Omit to detect it from the question (en when it cannot be told)."},
    "as_of": {"type": "string", "format": "date", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
      "description": "Answer from the procedure versions in force on this day (ISO date, %s to %s) instead of today: for audits and for preparing a coming change."},
    "procedure": {"type": "string", "pattern": "^[a-z0-9-]{3,64}$",
      "description": "The procedure the operator confirmed after a clarification: an option's procedure from relevance.clarification. Send it with the same question; the answer then considers only that procedure."}%%s
  },
  "required": ["question"],
  "additionalProperties": false
}`, request.MaxQuestionChars, languageEnum(), request.MinAsOf, request.MaxAsOf)

	topKInput = fmt.Sprintf(`,
    "top_k": {"type": "integer", "minimum": 1, "maximum": %d, "default": %d,
      "description": "How many evidence blocks to return at most."}`, request.MaxTopK, request.DefaultTopK)

	statusInput = fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "language": {"type": "string", "enum": [%s], "default": "en",
      "description": "Language of the procedures whose index status is wanted."}
  },
  "additionalProperties": false
}`, languageEnum())
)

// languageEnum is the supported languages as the items of a JSON enum: "en", "de".
func languageEnum() string {
	quoted := make([]string, len(textproc.Languages))
	for i, l := range textproc.Languages {
		quoted[i] = strconv.Quote(l)
	}
	return strings.Join(quoted, ", ")
}

// readOnly: the tools read the procedures; calling one again is harmless.
var readOnly = &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}

func lookupTool() (*sdk.Tool, error) {
	out, err := outputSchema[lookup.Result]()
	return &sdk.Tool{Name: lookup.ToolLookup, Title: "Look up procedures", Description: lookupDescription,
		InputSchema: json.RawMessage(fmt.Sprintf(questionInput, topKInput)), OutputSchema: out, Annotations: readOnly}, err
}

func askTool() (*sdk.Tool, error) {
	out, err := outputSchema[lookup.Answer]()
	return &sdk.Tool{Name: ToolAsk, Title: "Answer from procedures", Description: askDescription,
		InputSchema: json.RawMessage(fmt.Sprintf(questionInput, "")), OutputSchema: out, Annotations: readOnly}, err
}

func statusTool() (*sdk.Tool, error) {
	out, err := outputSchema[domain.Status]()
	return &sdk.Tool{Name: ToolStatus, Title: "Procedures index status", Description: statusDescription,
		InputSchema: json.RawMessage(statusInput), OutputSchema: out, Annotations: readOnly}, err
}

// outputSchema is the published JSON Schema of a tool's structured content: strictSchema with
// every object left open to members it does not name. The contract lets a response gain fields;
// a client that still holds the tool list of an older deployment must not refuse the newer
// result.
func outputSchema[T any]() (*jsonschema.Schema, error) {
	s, err := strictSchema[T]()
	if err != nil {
		return nil, err
	}
	for o := range objects(s) {
		if isFalse(o.AdditionalProperties) {
			o.AdditionalProperties = nil
		}
	}
	return s, nil
}

// strictSchema is the JSON Schema of the structured content of a tool whose service returns a T
// (lookup.Result, lookup.Answer, domain.Status): T's schema inferred from the struct tags
// that encode it, plus the correlation_id every response adds, every object closed to members it
// does not name. It is inferred from T rather than from the tool's output type that embeds T:
// unlike encoding/json, the inference drops a promoted field that shares its Go name with the
// embedded type (Answer.Answer), and "answer" would go missing. The tests validate every kind of
// result against it.
func strictSchema[T any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{IgnoreInvalidTypes: true})
	if err != nil {
		return nil, fmt.Errorf("infer the output schema of %T: %w", *new(T), err)
	}
	if s.Type != "object" || s.Properties == nil {
		return nil, fmt.Errorf("the output schema of %T is not an object schema", *new(T))
	}
	s.Properties["correlation_id"] = &jsonschema.Schema{Type: "string"}
	s.Required = append(s.Required, "correlation_id")
	docs := map[string]string{
		"evidence_state": evidenceStateDoc,
		"primary":        "The best evidence block, or null when there is no evidence at all.",
		"supplement":     "The evidence blocks after the primary, best first.",
		"invocation_id":  "Id of the recorded trace of this call.",
		"correlation_id": "Id of this request in the service's logs.",
		"document_count": "Documents verified as indexed; null unless every managed source was verified.",
	}
	for name, doc := range docs {
		if p := s.Properties[name]; p != nil {
			p.Description = doc
		}
	}
	if p := s.Properties["evidence_state"]; p != nil {
		p.Enum = []any{port.StateGrounded, port.StateInsufficient, port.StateUnavailable}
	}
	if r := s.Properties["relevance"]; r != nil && r.Properties["alternatives"] != nil {
		r.Properties["alternatives"].Description = alternativesDoc
	}
	return s, nil
}

// objects yields every object schema in s, s included.
func objects(s *jsonschema.Schema) iter.Seq[*jsonschema.Schema] {
	return func(yield func(*jsonschema.Schema) bool) {
		var walk func(*jsonschema.Schema) bool
		walk = func(s *jsonschema.Schema) bool {
			if s == nil {
				return true
			}
			if s.Type == "object" || slices.Contains(s.Types, "object") {
				if !yield(s) {
					return false
				}
			}
			for _, p := range s.Properties {
				if !walk(p) {
					return false
				}
			}
			return walk(s.Items) && walk(s.AdditionalProperties)
		}
		walk(s)
	}
}

// isFalse reports whether s is the schema false, as the inference writes it ({"not": {}}).
func isFalse(s *jsonschema.Schema) bool {
	return s != nil && s.Not != nil && reflect.DeepEqual(*s.Not, jsonschema.Schema{}) &&
		reflect.DeepEqual(*s, jsonschema.Schema{Not: s.Not})
}
