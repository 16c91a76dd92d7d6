package api

import (
	"context"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// Services are the domain services behind the routes. A function wires the ones it serves; the
// routes of a nil service are not served (404), so each function answers only its own routes.
type Services struct {
	Lookup Lookup    // POST /lookup, POST /ask, GET /invocations/{id}
	Status Status    // GET /status, GET /health
	Sync   Sync      // POST /sync, POST /sync-reports
	MCP    MCPServer // POST, GET and DELETE /mcp
	// Schedule is the work of the EventBridge schedule, for a function that it invokes
	// (Function.Scheduled); Handler.Entry hands it the schedule's events.
	Schedule ScheduleFunc
}

// Lookup is what the lookup routes need: the lookup service, which composition wires in.
type Lookup interface {
	Lookup(ctx context.Context, req lookup.LookupRequest) (lookup.Result, error)
	Ask(ctx context.Context, req lookup.AskRequest) (lookup.Answer, error)
	// Invocation is the trace of an invocation the actor may read, or domain.ErrNotFound.
	Invocation(ctx context.Context, id string, actor port.Actor) (lookup.Trace, error)
}

// Status is what GET /status and GET /health need (status.Service).
type Status interface {
	Status(ctx context.Context, lang string, call port.Call) (domain.Status, error)
	CheckHealth(ctx context.Context, call port.Call) domain.Health
}

// Sync is what POST /sync and POST /sync-reports need (indexsync.Service).
type Sync interface {
	Sync(ctx context.Context, call port.Call, language string) (domain.Run, error)
	// Report takes a sync report; domain.ErrInvalidReport when it cannot be stored as given.
	Report(ctx context.Context, call port.Call, r domain.SyncReport) (domain.ReportResult, error)
}
