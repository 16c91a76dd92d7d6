package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
)

// Request limits, the same as the HTTP routes'.
const (
	maxQuestionChars = request.MaxQuestionChars
	defaultTopK      = request.DefaultTopK
)

// Error codes of the API contract that a tool can answer.
const (
	codeInvalidRequest      = request.CodeInvalidRequest
	codeUnsupportedLanguage = request.CodeUnsupportedLanguage
	codeNotFound            = request.CodeNotFound
	codeInternal            = request.CodeInternal
	codeUnavailable         = request.CodeUnavailable
)

// LookupOutput is the structured content of lookup_knowledge: the POST /lookup response.
type LookupOutput struct {
	lookup.Result
	CorrelationID string `json:"correlation_id"`
}

// AskOutput is the structured content of ask_knowledge: the POST /ask response.
type AskOutput struct {
	lookup.Answer
	CorrelationID string `json:"correlation_id"`
}

// StatusOutput is the structured content of knowledge_status: the GET /status response.
type StatusOutput struct {
	domain.Status
	CorrelationID string `json:"correlation_id"`
}

type questionArgs struct {
	Question *string `json:"question"`
	Language *string `json:"language"`
	TopK     *int    `json:"top_k"`
	AsOf     *string `json:"as_of"`
}

type statusArgs struct {
	Language *string `json:"language"`
}

func (s *Server) lookup(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	call := s.call(ctx)
	a, q, lang, detected, e := questionArguments(req.Params.Arguments)
	if e != nil {
		return errorResult(e, call.CorrelationID), nil
	}
	topK, te := request.TopK(a.TopK)
	if te != nil {
		return errorResult(fromRequest(te), call.CorrelationID), nil
	}
	asOf, ae := request.AsOf(a.AsOf)
	if ae != nil {
		return errorResult(fromRequest(ae), call.CorrelationID), nil
	}
	res, err := s.svc.Lookup.Lookup(ctx, lookup.LookupRequest{Question: q, Language: lang, TopK: topK,
		AsOf: asOf, Actor: call.Actor, CorrelationID: call.CorrelationID})
	if err != nil {
		return errorResult(s.domainError(ctx, call, err), call.CorrelationID), nil
	}
	res.Language, res.LanguageDetected = lang, detected
	return result(LookupOutput{Result: res, CorrelationID: call.CorrelationID}, lookupText(res))
}

func (s *Server) ask(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	call := s.call(ctx)
	a, q, lang, detected, e := questionArguments(req.Params.Arguments)
	if e == nil && a.TopK != nil {
		e = invalid("top_k", request.UnknownMemberMessage("top_k")) // as POST /ask refuses it
	}
	if e != nil {
		return errorResult(e, call.CorrelationID), nil
	}
	asOf, ae := request.AsOf(a.AsOf)
	if ae != nil {
		return errorResult(fromRequest(ae), call.CorrelationID), nil
	}
	ans, err := s.svc.Ask.Ask(ctx, lookup.AskRequest{Question: q, Language: lang, AsOf: asOf, Actor: call.Actor,
		CorrelationID: call.CorrelationID, Tool: ToolAsk})
	if err != nil {
		return errorResult(s.domainError(ctx, call, err), call.CorrelationID), nil
	}
	ans.Language, ans.LanguageDetected = lang, detected
	return result(AskOutput{Answer: ans, CorrelationID: call.CorrelationID},
		fmt.Sprintf("evidence_state: %s\n%s", ans.EvidenceState, ans.Answer)+comingSourcesText(ans.Sources))
}

func (s *Server) status(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	call := s.call(ctx)
	var a statusArgs
	if e := decodeArgs(req.Params.Arguments, &a); e != nil {
		return errorResult(e, call.CorrelationID), nil
	}
	lang := "en"
	if a.Language != nil {
		if e := textField("language", *a.Language); e != nil {
			return errorResult(e, call.CorrelationID), nil
		}
		var e *toolError
		if lang, e = languageOf(a.Language); e != nil {
			return errorResult(e, call.CorrelationID), nil
		}
	}
	st, err := s.svc.Status.Status(ctx, lang, call)
	if err != nil {
		return errorResult(s.domainError(ctx, call, err), call.CorrelationID), nil
	}
	count := "null (not verified)"
	if st.DocumentCount != nil {
		count = fmt.Sprint(*st.DocumentCount)
	}
	return result(StatusOutput{Status: st, CorrelationID: call.CorrelationID},
		fmt.Sprintf("language %s, provider %s: %d source documents, document_count %s, statistics_state %s",
			st.Language, st.Provider, st.SourceDocumentCount, count, st.StatisticsState))
}

// call is the authorised call of the request. The API hands every request to ServeMCP with
// one; without it (a wiring mistake) the call has no actor, and the services record none.
func (s *Server) call(ctx context.Context) port.Call {
	c, ok := callFrom(ctx)
	if !ok {
		s.log.ErrorContext(ctx, "MCP tool call without an authorised call")
	}
	return c
}

// decodeArgs decodes a tool's arguments (absent means {}) with the messages of the HTTP routes'
// JSON checks.
func decodeArgs(raw json.RawMessage, v any) *toolError {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return invalid(te.Field, fmt.Sprintf("field %q must be a JSON %s", te.Field, request.JSONKind(te.Type.Kind().String())))
		}
		return invalid("", "the arguments must be a JSON object")
	}
	if name, ok := request.UnknownMember(raw, v); ok {
		return invalid(name, request.UnknownMemberMessage(name))
	}
	return nil
}

// questionArguments decodes the arguments of a tool that takes a question, and checks its
// question and language.
func questionArguments(raw json.RawMessage) (a questionArgs, q, lang string, detected bool, err *toolError) {
	if err = decodeArgs(raw, &a); err != nil {
		return a, "", "", false, err
	}
	q, lang, detected, err = questionAndLanguage(a.Question, a.Language)
	return a, q, lang, detected, err
}

// questionAndLanguage validates question and language as the /lookup and /ask routes do: a
// missing (or null) language is detected from the question, a given one must be supported.
func questionAndLanguage(question, language *string) (q, lang string, detected bool, err *toolError) {
	// The text of every field is checked first, as the routes check the body before its fields.
	if question != nil {
		if err := textField("question", *question); err != nil {
			return "", "", false, err
		}
	}
	if language != nil {
		if err := textField("language", *language); err != nil {
			return "", "", false, err
		}
	}
	q, lang, detected, e := request.QuestionAndLanguage(question, language)
	if e != nil {
		return "", "", false, fromRequest(e)
	}
	return q, lang, detected, nil
}

// languageOf checks a given language as the HTTP routes do (request.Language).
func languageOf(language *string) (string, *toolError) {
	lang, e := request.Language(language)
	if e != nil {
		return "", fromRequest(e)
	}
	return lang, nil
}

// textField refuses NUL and control characters (tab, CR and LF aside) with the HTTP routes'
// message. Invalid UTF-8 and lone surrogates never reach a tool: the SDK's JSON decoding has
// replaced them with U+FFFD by then; the API finds them in the raw message first
// (request.ArgumentsError), and control characters too.
func textField(name, s string) *toolError {
	for _, r := range s {
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' {
			problem := fmt.Sprintf("a control character (U+%04X); only tab, CR and LF are allowed", r)
			if r == 0 {
				problem = "a NUL character"
			}
			return invalid(name, name+" must be text: it holds "+problem)
		}
	}
	return nil
}

// domainError answers a service error as request.Classify classifies it, with the codes and
// messages of the HTTP routes; anything unexpected is internal, its details only in the log.
func (s *Server) domainError(ctx context.Context, call port.Call, err error) *toolError {
	e := request.Classify(err)
	if e.Code == codeInternal {
		s.log.ErrorContext(ctx, "unexpected error", "correlation_id", call.CorrelationID, "error", port.SafeError(err))
	}
	return fromRequest(&e)
}

var errInternal = fromRequest(&request.Internal)

// fromRequest is a field's error as a tool error, with the same code, field and message.
func fromRequest(e *request.Error) *toolError {
	return &toolError{Code: e.Code, Field: e.Field, Message: e.Message}
}

func invalid(field, msg string) *toolError {
	return &toolError{Code: codeInvalidRequest, Message: msg, Field: field}
}

// lookupText is the short text rendering of a lookup for clients that read only text: the
// evidence state, what it obliges the model to (with the competing procedures, when the evidence
// points to several), and the primary block.
func lookupText(r lookup.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "evidence_state: %s\n", r.EvidenceState)
	switch r.EvidenceState {
	case port.StateInsufficient:
		if alts := r.Relevance.Alternatives; len(alts) > 0 {
			b.WriteString("The evidence points to several procedures:")
			for i, a := range alts {
				if i > 0 {
					b.WriteString(";")
				}
				fmt.Fprintf(&b, " %s (%s, favoured by %s)", a.Title, a.DocumentID, strings.Join(a.FavouredBy, " and "))
			}
			b.WriteString(". Do not act on any of them: ask the operator which situation applies, then look up again.\n")
			break
		}
		b.WriteString("The procedures do not clearly cover this question: do not answer it from general knowledge; say so, or ask for details.\n")
	case port.StateUnavailable:
		b.WriteString("No evidence could be retrieved now: do not answer from general knowledge; say the procedures are unavailable.\n")
	}
	if r.Primary == nil {
		b.WriteString("No evidence block.")
		return b.String()
	}
	p := r.Primary
	fmt.Fprintf(&b, "Primary: %s (%s v%s, effective %s, %s)\n%s", p.Breadcrumb, p.DocumentID, p.Version,
		p.EffectiveDate, p.Source, p.Content)
	b.WriteString(comingText(p))
	if n := len(r.EvidenceBlocks) - 1; n > 0 {
		fmt.Fprintf(&b, "\n(%d more evidence block(s) in the structured content; invocation_id %s)", n, r.InvocationID)
	}
	return b.String()
}

// marshal encodes v as the HTTP routes do (request.Marshal).
func marshal(v any) ([]byte, error) { return request.Marshal(v) }
