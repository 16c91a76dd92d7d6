package api

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
)

// statusRoutes are the routes of the status function.
var statusRoutes = []*route{
	{FunctionStatus, "GET /status", []string{ScopeRead}, false, statusService, jsonRoute((*Handler).getStatus)},
	// Public: without credentials, the status alone.
	{FunctionStatus, "GET /health", []string{ScopeRead}, true, statusService, jsonRoute((*Handler).health)},
}

type statusResponse struct {
	domain.Status
	CorrelationID string `json:"correlation_id"`
}

func (h *Handler) getStatus(ctx context.Context, c *call) (any, *Error) {
	lang, e := statusQuery(c.r.URL.RawQuery)
	if e != nil {
		return nil, e
	}
	l, re := request.Status(lang)
	if re != nil {
		return nil, badRequest(re)
	}
	st, err := h.status.Status(ctx, l, port.Call{Actor: c.actor, CorrelationID: c.correlationID})
	if err != nil {
		return nil, h.domainError(ctx, c, err)
	}
	return statusResponse{Status: st, CorrelationID: c.correlationID}, nil
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

// statusQuery reads GET /status's query string, whose one parameter is language (nil when it is
// absent). As with unknown body members, nothing a caller sends is silently ignored: a parameter
// the route does not define (as_of, refresh), a repeated one, and a malformed query string (a
// ";" separator, an empty pair such as a trailing "&", a bad escape) get 400 invalid_request
// naming them (the first few of many), the first as field.
func statusQuery(raw string) (*string, *Error) {
	if raw == "" {
		return nil, nil
	}
	var lang *string
	var unknown []string
	for _, pair := range strings.Split(raw, "&") {
		name, value, _ := strings.Cut(pair, "=")
		switch {
		case pair == "":
			return nil, invalid("", fmt.Sprintf("malformed query string %q: an empty parameter (a stray or trailing \"&\")", clip(raw)))
		case strings.Contains(pair, ";"):
			return nil, invalid(clip(name), fmt.Sprintf("malformed query parameter %q: separate parameters with \"&\", not \";\"", clip(pair)))
		}
		n, err1 := url.QueryUnescape(name)
		v, err2 := url.QueryUnescape(value)
		switch {
		case err1 != nil || err2 != nil:
			return nil, invalid(clip(name), fmt.Sprintf("malformed query parameter %q: a bad %%-escape", clip(pair)))
		case n != "language":
			if !slices.Contains(unknown, n) {
				unknown = append(unknown, n)
			}
		case lang != nil:
			return nil, invalid("language", "query parameter \"language\" is given more than once: give it once")
		default:
			lang = &v
		}
	}
	if len(unknown) > 0 {
		names := make([]string, 0, 5)
		for _, n := range unknown[:min(len(unknown), 5)] {
			names = append(names, strconv.Quote(clip(n)))
		}
		more := ""
		if len(unknown) > 5 {
			more = fmt.Sprintf(" and %d more", len(unknown)-5)
		}
		return nil, invalid(clip(unknown[0]), fmt.Sprintf("unknown query parameter %s%s: GET /status takes only language",
			strings.Join(names, ", "), more))
	}
	return lang, nil
}

// clip cuts a caller's text named in an error message to 64 bytes, on a rune boundary.
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	i := 64
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
