// Package app wires the service from its configuration, once per cold start: the corpus, its
// analysis, the provider, the stores and the HTTP handler. The Lambda functions and the local API
// call it the same way, so only the transport adapter differs between them.
package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/indexsync"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/mcp"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/obs"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/ragcore"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/secret"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/status"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/tracing"
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
	// circuit breaker through retrieval.BreakerReporter).
	Provider retrieval.KnowledgeProvider
}

// Functions are the Lambda functions and the routes each serves.
const (
	FunctionLookup = "lookup" // POST /lookup, POST /ask, GET /invocations/{id}, /mcp
	FunctionStatus = "status" // GET /status, GET /health
	FunctionSync   = "sync"   // POST /sync, POST /sync-reports, the schedule
)

// FunctionHandler is the handler of one Lambda function: only that function's routes.
func (a *App) FunctionHandler(function string) *api.Handler {
	var s api.Services
	switch function {
	case FunctionLookup:
		s.Lookup = a.Service
		s.MCP = newMCP(a.Service, a.Status, a.Log)
	case FunctionStatus:
		s.Status = a.Status
	case FunctionSync:
		s.Sync = a.Sync
	}
	return api.New(s, api.AuthMode(a.Config.AuthMode), a.Log)
}

// New builds the whole application (every route: the local API). out receives logs and
// metrics (stdout in Lambda).
func New(ctx context.Context, cfg config.Config, out io.Writer) (*App, error) {
	return NewFunction(ctx, cfg, out, "")
}

// NewFunction builds what one Lambda function needs ("" for all). The analysed index, the
// largest part of a cold start (about 15 ms), is built only where something reads it: the
// lookup function, and any function of the demo provider, which retrieves and verifies through
// it. The status and sync functions of the RAGcore provider start without it.
func NewFunction(ctx context.Context, cfg config.Config, out io.Writer, function string) (*App, error) {
	log := obs.NewLogger(out, cfg.LogLevel, cfg.FunctionName)
	start := time.Now()
	corpus, err := loadCorpus(cfg)
	if err != nil {
		return nil, err
	}
	var ix *lexical.Index
	if function == "" || function == FunctionLookup || cfg.Provider != "ragcore" {
		ix = lexical.Build(corpus)
	}
	tracer := tracing.New(cfg.XRayDaemonAddress, log)
	metrics := obs.NewEMF(out, cfg.FunctionName)
	provider, err := newProvider(ctx, cfg, corpus, ix, tracer, log, metrics)
	if err != nil {
		return nil, err
	}
	opts := retrieval.DefaultOptions()
	opts.L1Enabled = cfg.L1Enabled
	opts.TraceRetention = cfg.TraceRetention
	opts.ProviderTimeout = cfg.RAGcoreTimeout
	cos := opts.ScoreScales["cosine_similarity"]
	cos.Grounded, cos.Supported = cfg.GroundedCosine, cfg.SupportedCosine
	opts.ScoreScales["cosine_similarity"] = cos
	opts.Metrics = metrics
	side, sideHealth, err := newSidecar(ctx, cfg, corpus, tracer, log)
	if err != nil {
		// Reported as the sidecar's status on every lookup and in /health, never as a failure of
		// the main path.
		log.ErrorContext(ctx, "sidecar could not be built; lookups report it failed", "error", err.Error())
	}
	opts.Sidecar, opts.SidecarTimeout = side, cfg.SidecarTimeout
	records, storeName, err := newStore(ctx, cfg, tracer, log)
	if err != nil {
		return nil, err
	}
	var svc *retrieval.Service
	if ix != nil {
		svc = retrieval.New(ix, provider, records, opts, log)
	}
	ns := store.Namespace{Tenant: cfg.Tenant, Workspace: cfg.Workspace, Collection: cfg.Collection}
	verifier, ok := provider.(retrieval.Verifier)
	if !ok {
		return nil, fmt.Errorf("provider %s cannot verify its sources", provider.Name())
	}
	st := status.New(corpus, provider, verifier, records, status.Options{Namespace: ns, Concurrency: cfg.VerifyConcurrency,
		RequestTimeout: cfg.RAGcoreTimeout, Budget: cfg.VerifyBudget, Metrics: opts.Metrics,
		Sidecar: sideHealth, NegativeTTL: cfg.VerifyNegativeTTL}, log)
	sy := indexsync.New(corpus, provider, records, st, ns, log)
	log.InfoContext(ctx, "initialised", "provider", provider.Name(), "store", storeName, "xray", tracer.Active(),
		"sidecar", sideHealth.Status, "index", ix != nil,
		"documents_en", len(corpus.Documents("en")), "documents_de", len(corpus.Documents("de")),
		"init_ms", float64(time.Since(start).Microseconds())/1000)
	return &App{Config: cfg, Corpus: corpus, Provider: provider, Service: svc, Records: records, Status: st, Sync: sy,
		Handler: api.New(api.Services{Lookup: svc, Status: st, Sync: sy, MCP: newMCP(svc, st, log)}, api.AuthMode(cfg.AuthMode), log),
		Log:     log}, nil
}

// newMCP is the MCP endpoint over the lookup service (lookup_knowledge, ask_knowledge) and the
// status service (knowledge_status); nil without a lookup service.
func newMCP(svc *retrieval.Service, st *status.Service, log *slog.Logger) api.MCPServer {
	if svc == nil {
		return nil
	}
	return mcp.New(mcp.Services{Lookup: svc, Ask: svc, Status: st}, MCPVersion, log)
}

// MCPVersion is the implementation version the MCP endpoint reports to clients.
const MCPVersion = "1.0.0"

// newProvider builds the configured knowledge provider. The RAGcore token is read once here: from
// the SSM SecureString RAGCORE_TOKEN_PARAMETER names when set, else from RAGCORE_TOKEN.
func newProvider(ctx context.Context, cfg config.Config, corpus *knowledge.Corpus, ix *lexical.Index, tracer *tracing.Tracer,
	log *slog.Logger, metrics retrieval.Metrics) (retrieval.KnowledgeProvider, error) {
	if cfg.Provider != "ragcore" {
		return demo.New(ix), nil
	}
	token, source := cfg.RAGcoreToken, "environment"
	if cfg.RAGcoreTokenParameter != "" {
		awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithHTTPClient(
			awshttp.NewBuildableClient().WithTimeout(ssmTimeout)))
		if err != nil {
			return nil, fmt.Errorf("load AWS configuration: %w", err)
		}
		if awsCfg.Region == "" {
			awsCfg.Region = cfg.AWSRegion
		}
		tracer.AWS(&awsCfg)
		if token, err = secret.Parameter(ctx, ssm.NewFromConfig(awsCfg), cfg.RAGcoreTokenParameter, ssmTimeout); err != nil {
			return nil, err
		}
		source = "ssm:" + cfg.RAGcoreTokenParameter
	}
	client, err := ragcore.New(ragcore.Options{BaseURL: cfg.RAGcoreBaseURL, Token: token, Timeout: cfg.RAGcoreTimeout,
		HTTPClient: tracer.HTTP(ragcore.NewHTTPClient(cfg.RAGcoreTimeout)),
		Namespace:  ragcore.Namespace{Tenant: cfg.Tenant, Workspace: cfg.Workspace, Collection: cfg.Collection},
		Breaker:    ragcore.BreakerOptions{Failures: cfg.RAGcoreBreakerFailures, Cooldown: cfg.RAGcoreBreakerCooldown},
		Log:        log, Metrics: metrics})
	if err != nil {
		return nil, err
	}
	log.InfoContext(ctx, "RAGcore provider", "token_source", source, "tenant", cfg.Tenant, "workspace", cfg.Workspace,
		"collection", cfg.Collection, "source_prefix", cfg.RAGcoreSourcePrefix, "timeout_ms", cfg.RAGcoreTimeout.Milliseconds(),
		"breaker_failures", cfg.RAGcoreBreakerFailures, "breaker_cooldown_ms", cfg.RAGcoreBreakerCooldown.Milliseconds())
	return ragcore.NewProvider(client, corpus, ragcore.ProviderOptions{SourcePrefix: cfg.RAGcoreSourcePrefix, Log: log}), nil
}

// ssmTimeout bounds reading the token at a cold start.
const ssmTimeout = 3 * time.Second

// newStore returns the DynamoDB store in Lambda or with DYNAMODB_ENDPOINT, else the in-memory one.
func newStore(ctx context.Context, cfg config.Config, tracer *tracing.Tracer, log *slog.Logger) (store.Records, string, error) {
	if !cfg.UseDynamoDB() {
		return store.NewMemory().WithLogger(log), "memory", nil
	}
	client, err := store.NewDynamoClient(ctx, store.ClientOptions{Endpoint: cfg.DynamoDBEndpoint, Region: cfg.AWSRegion,
		HTTPTimeout: cfg.DynamoDBTimeout, Configure: tracer.AWS})
	if err != nil {
		return nil, "", err
	}
	return store.NewDynamo(client, cfg.TableName, cfg.DynamoDBTimeout, nil), "dynamodb:" + cfg.TableName, nil
}

func loadCorpus(cfg config.Config) (*knowledge.Corpus, error) {
	if cfg.KnowledgeDir != "" {
		c, err := knowledge.LoadDir(cfg.KnowledgeDir)
		if err != nil {
			return nil, fmt.Errorf("KNOWLEDGE_DIR %s: %w", cfg.KnowledgeDir, err)
		}
		return c, nil
	}
	return knowledge.Embedded()
}

// SchedulerActorID names the scheduled refresh to RAGcore.
const SchedulerActorID = "service:scheduler"

// Refresh is the scheduled event's work: verify every language now and cache the results.
func (a *App) Refresh(ctx context.Context, eventID string) (any, error) {
	call := retrieval.Call{Actor: retrieval.Actor{ID: SchedulerActorID, Scopes: []string{"knowledge:read"}},
		CorrelationID: eventID}
	res := a.Sync.Refresh(ctx, call)
	return map[string]any{"refreshed": res}, nil
}
