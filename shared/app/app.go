// Package app is the whole application in one process: every route, for the local API
// (cmd/local, cmd/loadtest) and the tests. The Lambda functions do not use it: each
// functions/<name>/main.go wires only its own parts from package wire.
package app

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/indexsync"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/status"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/wire"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/wire/mcpwire"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/wire/sidecarwire"
)

// App is the wired service.
type App struct {
	Config  config.Config
	Corpus  *knowledge.Corpus
	Service *retrieval.Service
	Records store.Records
	Status  *status.Service
	Sync    *indexsync.Service
	// Handler serves every route (the local API); FunctionHandler serves one function's.
	Handler *api.Handler
	Log     *slog.Logger

	// Provider is the knowledge provider every service uses (the RAGcore provider reports its
	// circuit breaker through port.BreakerReporter).
	Provider wire.Provider

	parts    *wire.Parts
	services api.Services // every service built, as Handler serves them
}

// FunctionHandler is the handler of one Lambda function: only that function's routes (api's route
// tables pick them; the services of the others are not reached).
func (a *App) FunctionHandler(function api.Function) *api.Handler {
	return a.parts.Handler(function, a.services)
}

// New builds the whole application (every route: the local API). out receives logs and
// metrics (stdout in Lambda).
func New(ctx context.Context, cfg config.Config, out io.Writer) (*App, error) {
	return NewFunction(ctx, cfg, out, "")
}

// NewFunction builds every service the way function's main builds its parts ("" for all): the
// index only where it is read (wire.New), the sidecar for a lookup.
func NewFunction(ctx context.Context, cfg config.Config, out io.Writer, function api.Function) (*App, error) {
	return NewFunctionAt(ctx, cfg, out, function, nil)
}

// NewFunctionAt is NewFunction with the clock that tells today, whose procedure versions are in
// force (nil: time.Now).
func NewFunctionAt(ctx context.Context, cfg config.Config, out io.Writer, function api.Function, now func() time.Time) (*App, error) {
	p, err := wire.New(ctx, cfg, out, wire.Needs{Index: function == "" || function == api.FunctionLookup,
		Raw: function == "" || function == api.FunctionSync, Clock: now})
	if err != nil {
		return nil, err
	}
	side, sideHealth := sidecarwire.New(ctx, p)
	st, err := p.Status(sideHealth)
	if err != nil {
		return nil, err
	}
	sy := p.Sync(st)
	svc := p.Lookup(side)
	s := api.Services{Status: st, Sync: sy, Schedule: wire.Refresh(sy)}
	if svc != nil { // a nil *retrieval.Service in the interface would be served
		s.Lookup, s.MCP = svc, mcpwire.New(svc, st, p.Log)
	}
	p.Initialised(ctx, sideHealth.Status)
	return &App{Config: cfg, Corpus: p.Corpus, Provider: p.Provider, Service: svc, Records: p.Records, Status: st, Sync: sy,
		Handler: p.Handler("", s), Log: p.Log, parts: p, services: s}, nil
}

// SchedulerActorID names the scheduled refresh to RAGcore.
const SchedulerActorID = wire.SchedulerActorID

// Refresh is the scheduled event's work: verify every language now and cache the results.
func (a *App) Refresh(ctx context.Context, eventID string) (any, error) {
	return wire.Refresh(a.Sync)(ctx, eventID)
}
