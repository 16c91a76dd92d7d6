package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
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

type statusArgs struct {
	Language *string `json:"language"`
}

// The tools decode their arguments into the members the HTTP routes decode (request.LookupBody,
// request.AskBody) and check them with the same function per operation.

func (s *Server) lookup(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	call := s.call(ctx)
	var a request.LookupBody
	if e := decodeArgs(req.Params.Arguments, &a); e != nil {
		return errorResult(e, call.CorrelationID), nil
	}
	q, detected, e := request.Lookup(a)
	if e != nil {
		return errorResult(fromRequest(e), call.CorrelationID), nil
	}
	q.Actor, q.CorrelationID = call.Actor, call.CorrelationID
	res, err := s.svc.Lookup.Lookup(ctx, q)
	if err != nil {
		return errorResult(s.domainError(ctx, call, err), call.CorrelationID), nil
	}
	res.Language, res.LanguageDetected = q.Language, detected
	return result(LookupOutput{Result: res, CorrelationID: call.CorrelationID}, lookupText(res))
}

func (s *Server) ask(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	call := s.call(ctx)
	var a request.AskBody
	if e := decodeArgs(req.Params.Arguments, &a); e != nil {
		return errorResult(e, call.CorrelationID), nil
	}
	q, detected, e := request.Ask(a)
	if e != nil {
		return errorResult(fromRequest(e), call.CorrelationID), nil
	}
	q.Actor, q.CorrelationID, q.Tool = call.Actor, call.CorrelationID, ToolAsk
	ans, err := s.svc.Ask.Ask(ctx, q)
	if err != nil {
		return errorResult(s.domainError(ctx, call, err), call.CorrelationID), nil
	}
	ans.Language, ans.LanguageDetected = q.Language, detected
	return result(AskOutput{Answer: ans, CorrelationID: call.CorrelationID}, askText(ans))
}

func (s *Server) status(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	call := s.call(ctx)
	var a statusArgs
	if e := decodeArgs(req.Params.Arguments, &a); e != nil {
		return errorResult(e, call.CorrelationID), nil
	}
	lang, e := request.Status(a.Language)
	if e != nil {
		return errorResult(fromRequest(e), call.CorrelationID), nil
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

// domainError answers a service error as request.Classify classifies it, with the codes and
// messages of the HTTP routes; anything unexpected is internal, its details only in the log.
func (s *Server) domainError(ctx context.Context, call port.Call, err error) *toolError {
	e := request.Classify(err)
	if e.Code == request.CodeInternal {
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
	return &toolError{Code: request.CodeInvalidRequest, Message: msg, Field: field}
}

// textBlocks is how many evidence blocks the text rendering quotes: the answering section is
// often not the primary block but the next one or two.
const textBlocks = 3

// lookupText renders a lookup for a model that reads the text content: the evidence state and
// what it asks of the agent (the clarification to relay, with the options to send back as
// procedure), then the first textBlocks blocks with their provenance.
func lookupText(r lookup.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "evidence_state: %s\n", r.EvidenceState)
	if r.Procedure != "" {
		fmt.Fprintf(&b, "Confined to the procedure the operator confirmed: %s.\n", r.Procedure)
	}
	switch r.EvidenceState {
	case port.StateInsufficient:
		writeInsufficient(&b, r.Relevance)
	case port.StateUnavailable:
		b.WriteString("No evidence could be retrieved now: do not answer from general knowledge; say the procedures are unavailable.\n")
	}
	if len(r.EvidenceBlocks) == 0 || r.Primary == nil {
		b.WriteString("No evidence block.")
		return b.String()
	}
	writeComplements(&b, r.Relevance.Complements)
	shown := 0
	for i, blk := range r.EvidenceBlocks {
		if i == textBlocks || blk.Outdated {
			break
		}
		label := "Primary"
		if i > 0 {
			label = "Block " + strconv.Itoa(i+1)
		}
		fmt.Fprintf(&b, "%s: %s (%s v%s, effective %s, %s)\n%s%s\n", label, blk.Breadcrumb, blk.DocumentID, blk.Version,
			blk.EffectiveDate, blk.Source, blk.Content, comingText(&r.EvidenceBlocks[i]))
		shown++
	}
	if n := len(r.EvidenceBlocks) - shown; n > 0 {
		fmt.Fprintf(&b, "(%d more evidence block(s) in the structured content; invocation_id %s)", n, r.InvocationID)
	}
	return strings.TrimRight(b.String(), "\n")
}

// writeComplements says which other procedures answer other parts of the question, each with
// its block among those quoted below, and that a weak one is not to be acted on.
func writeComplements(b *strings.Builder, cs []lookup.Complement) {
	for _, c := range cs {
		fmt.Fprintf(b, "The question has another part: %s (%s) answers it (%s; %s)", c.Title, c.DocumentID,
			strings.Join(c.Covers, ", "), c.Source)
		if c.Assessment != lookup.AssessmentStrong {
			b.WriteString(", but weakly: do not act on that part without confirming it")
		}
		b.WriteString(".\n")
	}
}

// writeInsufficient says what an insufficient answer asks of the agent: relay the clarification
// and send the chosen option back as procedure, or, without one, say the procedures do not cover
// the question.
func writeInsufficient(b *strings.Builder, rel lookup.Relevance) {
	if alts := rel.Alternatives; len(alts) > 0 {
		b.WriteString("The evidence points to several procedures:")
		for i, a := range alts {
			if i > 0 {
				b.WriteString(";")
			}
			fmt.Fprintf(b, " %s (%s, favoured by %s)", a.Title, a.DocumentID, strings.Join(a.FavouredBy, " and "))
		}
		b.WriteString(". Do not act on any of them.\n")
	}
	c := rel.Clarification
	if c == nil {
		if rel.Basis == lookup.BasisConfirmed {
			b.WriteString("The confirmed procedure does not clearly answer the question: say that the procedures do not cover it; do not answer from general knowledge.\n")
			return
		}
		b.WriteString("The procedures do not clearly cover this question: do not answer it from general knowledge; say so, or ask for details.\n")
		return
	}
	fmt.Fprintf(b, "Ask the operator which situation applies, as it is: %q\nOptions (send the chosen one as procedure, with the same question):", c.Question)
	for _, o := range c.Options {
		fmt.Fprintf(b, "\n- procedure %q: %s", o.Procedure, o.Situation)
	}
	b.WriteString("\n")
}

// marshal encodes v as the HTTP routes do (request.Marshal).
func marshal(v any) ([]byte, error) { return request.Marshal(v) }

// askText renders an ask for a model that reads the text content: the state, the answer, and the
// clarification when there is one.
func askText(ans lookup.Answer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "evidence_state: %s\n%s%s", ans.EvidenceState, ans.Answer, comingSourcesText(ans.Sources))
	if ans.Relevance != nil && ans.Relevance.Clarification != nil && ans.EvidenceState == port.StateInsufficient {
		b.WriteString("\n")
		writeInsufficient(&b, *ans.Relevance)
	}
	return strings.TrimRight(b.String(), "\n")
}
