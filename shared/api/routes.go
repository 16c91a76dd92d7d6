package api

import (
	"context"
	"net/http"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
)

// lookupRoutes are the routes of the lookup function. A new route of the function is a row here
// and its handler in this file.
var lookupRoutes = []*route{
	{FunctionLookup, "POST /lookup", []string{ScopeRead}, false, lookupService, jsonRoute((*Handler).lookup)},
	{FunctionLookup, "POST /ask", []string{ScopeRead}, false, lookupService, jsonRoute((*Handler).ask)},
	// Own invocations need knowledge:read; knowledge:admin reads any (the service checks which).
	{FunctionLookup, "GET /invocations/{invocation_id}", []string{ScopeRead, ScopeAdmin}, false, lookupService, jsonRoute((*Handler).invocation)},
	// The MCP server answers GET and DELETE itself (405, stateless), after the same authorisation.
	{FunctionLookup, "POST /mcp", []string{ScopeRead}, false, mcpService, (*Handler).mcp},
	{FunctionLookup, "GET /mcp", []string{ScopeRead}, false, mcpService, (*Handler).mcp},
	{FunctionLookup, "DELETE /mcp", []string{ScopeRead}, false, mcpService, (*Handler).mcp},
}

type lookupResponse struct {
	lookup.Result
	CorrelationID string `json:"correlation_id"`
}

func (h *Handler) lookup(ctx context.Context, c *call) (any, *Error) {
	var b request.LookupBody
	if err := decode(c, &b); err != nil {
		return nil, err
	}
	req, detected, e := request.Lookup(b)
	if e != nil {
		return nil, badRequest(e)
	}
	req.Actor, req.CorrelationID = c.actor, c.correlationID
	res, err := h.svc.Lookup(ctx, req)
	if err != nil {
		return nil, h.domainError(ctx, c, err)
	}
	res.Language, res.LanguageDetected = req.Language, detected
	return lookupResponse{Result: res, CorrelationID: c.correlationID}, nil
}

type askResponse struct {
	lookup.Answer
	CorrelationID string `json:"correlation_id"`
}

func (h *Handler) ask(ctx context.Context, c *call) (any, *Error) {
	var b request.AskBody
	if err := decode(c, &b); err != nil {
		return nil, err
	}
	req, detected, e := request.Ask(b)
	if e != nil {
		return nil, badRequest(e)
	}
	req.Actor, req.CorrelationID = c.actor, c.correlationID
	ans, err := h.svc.Ask(ctx, req)
	if err != nil {
		return nil, h.domainError(ctx, c, err)
	}
	ans.Language, ans.LanguageDetected = req.Language, detected
	return askResponse{Answer: ans, CorrelationID: c.correlationID}, nil
}

// badRequest is a field's error as a 400 of the error shape; nil for nil.
func badRequest(e *request.Error) *Error {
	if e == nil {
		return nil
	}
	return &Error{Status: http.StatusBadRequest, Code: e.Code, Field: e.Field, Message: e.Message}
}

type invocationResponse struct {
	lookup.Trace
	CorrelationID string `json:"correlation_id"`
}

func (h *Handler) invocation(ctx context.Context, c *call) (any, *Error) {
	notFound := &Error{Status: http.StatusNotFound, Code: request.CodeNotFound, Message: "no invocation with this id is visible to you"}
	id := c.r.PathValue("invocation_id")
	if !validCorrelationID(id) {
		return nil, notFound
	}
	t, err := h.svc.Invocation(ctx, id, c.actor)
	// The class is request.Classify's; the words are this route's: a trace that is not visible is
	// not found, and any other failure is the trace store's, to be tried again.
	switch {
	case err == nil:
	case request.Classify(err).Code == request.CodeNotFound:
		return nil, notFound
	default:
		h.log.ErrorContext(ctx, "read trace", "correlation_id", c.correlationID, "invocation_id", id,
			"error", port.SafeError(err))
		return nil, &Error{Status: http.StatusServiceUnavailable, Code: request.CodeUnavailable,
			Message: "the trace store is unavailable; try again shortly"}
	}
	return invocationResponse{Trace: t, CorrelationID: c.correlationID}, nil
}
