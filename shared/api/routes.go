package api

import (
	"context"
	"net/http"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
)

type lookupBody struct {
	Question  *string `json:"question"`
	Language  *string `json:"language"`
	TopK      *int    `json:"top_k"`
	AsOf      *string `json:"as_of"`
	Procedure *string `json:"procedure"`
}

type lookupResponse struct {
	lookup.Result
	CorrelationID string `json:"correlation_id"`
}

func (h *Handler) lookup(ctx context.Context, c *call) (any, *Error) {
	var b lookupBody
	if err := decode(c, &b); err != nil {
		return nil, err
	}
	q, lang, detected, err := questionAndLanguage(b.Question, b.Language)
	if err != nil {
		return nil, err
	}
	topK, te := request.TopK(b.TopK)
	if te != nil {
		return nil, badRequest(te)
	}
	asOf, ae := request.AsOf(b.AsOf)
	if ae != nil {
		return nil, badRequest(ae)
	}
	proc, pe := request.Procedure(b.Procedure)
	if pe != nil {
		return nil, badRequest(pe)
	}
	res, e := h.svc.Lookup(ctx, lookup.LookupRequest{Question: q, Language: lang, TopK: topK, AsOf: asOf,
		Procedure: proc, Actor: c.actor, CorrelationID: c.correlationID})
	if e != nil {
		return nil, h.domainError(ctx, c, e)
	}
	res.Language, res.LanguageDetected = lang, detected
	return lookupResponse{Result: res, CorrelationID: c.correlationID}, nil
}

type askBody struct {
	Question  *string `json:"question"`
	Language  *string `json:"language"`
	AsOf      *string `json:"as_of"`
	Procedure *string `json:"procedure"`
}

type askResponse struct {
	lookup.Answer
	CorrelationID string `json:"correlation_id"`
}

func (h *Handler) ask(ctx context.Context, c *call) (any, *Error) {
	var b askBody
	if err := decode(c, &b); err != nil {
		return nil, err
	}
	q, lang, detected, err := questionAndLanguage(b.Question, b.Language)
	if err != nil {
		return nil, err
	}
	asOf, ae := request.AsOf(b.AsOf)
	if ae != nil {
		return nil, badRequest(ae)
	}
	proc, pe := request.Procedure(b.Procedure)
	if pe != nil {
		return nil, badRequest(pe)
	}
	ans, e := h.svc.Ask(ctx, lookup.AskRequest{Question: q, Language: lang, AsOf: asOf, Procedure: proc, Actor: c.actor,
		CorrelationID: c.correlationID})
	if e != nil {
		return nil, h.domainError(ctx, c, e)
	}
	ans.Language, ans.LanguageDetected = lang, detected
	return askResponse{Answer: ans, CorrelationID: c.correlationID}, nil
}

// questionAndLanguage checks the fields lookup and ask share (request.QuestionAndLanguage).
func questionAndLanguage(question, language *string) (q, lang string, detected bool, err *Error) {
	q, lang, detected, e := request.QuestionAndLanguage(question, language)
	return q, lang, detected, badRequest(e)
}

// languageOf checks a language (request.Language): missing means "en".
func languageOf(language *string) (string, *Error) {
	lang, e := request.Language(language)
	return lang, badRequest(e)
}

// badRequest is a field's error as a 400 of the error shape; nil for nil.
func badRequest(e *request.Error) *Error {
	if e == nil {
		return nil
	}
	return &Error{Status: http.StatusBadRequest, Code: e.Code, Field: e.Field, Message: e.Message}
}

type healthResponse struct {
	domain.Health
	CorrelationID string `json:"correlation_id"`
}

// publicHealthResponse is what GET /health answers a caller without credentials.
type publicHealthResponse struct {
	Status        domain.HealthState `json:"status"`
	CorrelationID string             `json:"correlation_id"`
}

// HealthProbeActorID names an uncredentialed health check to the provider, which needs an actor
// on every call.
const HealthProbeActorID = "service:health-probe"

// health is GET /health: ok, degraded or unavailable, with the provider's and the store's
// component states (status.CheckHealth). It answers 200 in every state: the body says which. A
// caller without credentials (an uptime probe; deployed, every caller, since the gateway serves
// the route without its authorizer) gets the status alone; the components, the provider and the
// sidecar need knowledge:read.
func (h *Handler) health(ctx context.Context, c *call) (any, *Error) {
	if c.actor.ID == "" {
		probe := port.Call{Actor: port.Actor{ID: HealthProbeActorID, Scopes: []string{ScopeRead}}, CorrelationID: c.correlationID}
		return publicHealthResponse{Status: h.status.CheckHealth(ctx, probe).Status, CorrelationID: c.correlationID}, nil
	}
	return healthResponse{Health: h.status.CheckHealth(ctx, port.Call{Actor: c.actor, CorrelationID: c.correlationID}),
		CorrelationID: c.correlationID}, nil
}

type invocationResponse struct {
	lookup.Trace
	CorrelationID string `json:"correlation_id"`
}

func (h *Handler) invocation(ctx context.Context, c *call) (any, *Error) {
	notFound := &Error{Status: http.StatusNotFound, Code: request.CodeNotFound, Message: "no invocation with this id is visible to you"}
	if !validCorrelationID(c.param) {
		return nil, notFound
	}
	t, err := h.svc.Invocation(ctx, c.param, c.actor)
	// The class is request.Classify's; the words are this route's: a trace that is not visible is
	// not found, and any other failure is the trace store's, to be tried again.
	switch {
	case err == nil:
	case request.Classify(err).Code == request.CodeNotFound:
		return nil, notFound
	default:
		h.log.ErrorContext(ctx, "read trace", "correlation_id", c.correlationID, "invocation_id", c.param,
			"error", port.SafeError(err))
		return nil, &Error{Status: http.StatusServiceUnavailable, Code: request.CodeUnavailable,
			Message: "the trace store is unavailable; try again shortly"}
	}
	return invocationResponse{Trace: t, CorrelationID: c.correlationID}, nil
}
