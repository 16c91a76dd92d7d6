// Package wire builds the parts the Lambda functions share, once per cold start: the corpus and
// (where it is read) its index, the knowledge provider, the record store, one AWS configuration
// for every AWS client, and the services on top of them. Each functions/<name>/main.go takes the
// parts it serves and nothing else, so that a binary links only what it uses: wire links no
// Bedrock client (the sidecar is wired by sidecarwire, for the lookup function only).
package wire

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/indexsync"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/obs"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/ragcore"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/secret"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/sidecar/sidecarconf"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/status"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/tracing"
)

// The services are what the API's routes need.
var (
	_ api.Lookup = (*retrieval.Service)(nil)
	_ api.Status = (*status.Service)(nil)
	_ api.Sync   = (*indexsync.Service)(nil)

	_ indexsync.Verifications = (*status.Service)(nil)

	// The store keeps the lookup service's traces.
	_ retrieval.TraceStore = store.Records(nil)
)

// Parts are what a function is built from.
type Parts struct {
	Config  config.Config
	Log     *slog.Logger
	Corpus  *knowledge.Corpus
	Tracer  *tracing.Tracer
	Metrics *obs.EMF
	// Index is the analysed corpus of the versions in force at start; nil where nothing reads
	// it (see New). Epochs holds it and projects another set of versions in force from the
	// index of every version when a day asks for one; nil with Index.
	Index  *lexical.Index
	Epochs *lexical.Epochs
	// Now is the clock that tells today (Needs.Clock).
	Now func() time.Time
	// Provider is the knowledge provider every service uses.
	Provider  Provider
	Records   store.Records
	StoreName string

	start time.Time
	// knowledgeSource says where the corpus came from at this cold start: "prebuilt index" or
	// "parsed" (the procedure files, when no prebuilt index matched them).
	knowledgeSource string
	aws             func() (aws.Config, error)
	// gcPercent is the collector's setting to restore after the cold start, -1 when it was
	// left alone.
	gcPercent int
}

// Needs says what a function reads of the corpus beyond its documents.
type Needs struct {
	// Index: the analysed index (the lookup function, the local API).
	Index bool
	// Raw: the procedure files' bytes, which manifest sync sends (the sync function, the local
	// API). Without the index they are always kept.
	Raw bool
	// Clock tells today, whose versions are in force (nil: time.Now; tests set a day).
	Clock func() time.Time
}

// New builds the parts. The corpus and, when needs.Index is set, its analysed index come from
// the prebuilt index when it matches the corpus files (see loadKnowledge); the status and sync
// functions load the procedures alone. out receives logs and metrics (stdout in Lambda).
func New(ctx context.Context, cfg config.Config, out io.Writer, needs Needs) (*Parts, error) {
	p := &Parts{Config: cfg, Log: obs.NewLogger(out, cfg.LogLevel, cfg.FunctionName), start: time.Now(), gcPercent: -1,
		Now: needs.Clock}
	if p.Now == nil {
		p.Now = time.Now
	}
	if cfg.MemoryLimitBytes > 0 {
		debug.SetMemoryLimit(cfg.MemoryLimitBytes)
		// Loading the index allocates a few MB that all stay live: collecting during the cold
		// start only scans them again. Under the memory limit the collector still runs when the
		// heap nears it; Initialised turns collection back on.
		p.gcPercent = debug.SetGCPercent(-1)
	}
	var err error
	if p.Corpus, p.Index, p.knowledgeSource, err = loadKnowledge(cfg, p.Log, needs); err != nil {
		return nil, err
	}
	if needs.Index {
		// The index loaded holds every version on file; each day's set in force is a view of
		// it, today's made now rather than at the first lookup (the index itself when it holds
		// nothing else, as for a corpus without versions).
		p.Epochs = lexical.NewEpochs(p.Corpus, nil, nil, lexical.DefaultEpochs).WithBase(p.Index)
		if cfg.MemoryLimitBytes > 0 {
			// In a function, the sets kept hold at most a sixteenth of its memory: at 10,000
			// procedures the index of every version and the heap already fill most of 256 MB.
			p.Epochs = p.Epochs.WithByteBound(min(lexical.DefaultEpochBytes, cfg.MemoryLimitBytes/16))
		}
		p.Index = p.Epochs.Today(knowledge.Today(p.Now(), cfg.Zone())).Index
	}
	p.Tracer = tracing.New(tracing.Options{Mode: cfg.Tracing, XRayDaemonAddress: cfg.XRayDaemonAddress,
		Exporter: cfg.OTelTracesExporter, ServiceName: cfg.FunctionName, InLambda: cfg.InLambda, Out: out, Log: p.Log})
	p.Metrics = obs.NewEMF(out, cfg.FunctionName)
	p.aws = sync.OnceValues(func() (aws.Config, error) { return loadAWS(ctx, cfg, p.Tracer) })
	if p.Provider, err = p.newProvider(ctx); err != nil {
		return nil, err
	}
	if p.Records, p.StoreName, err = p.newStore(); err != nil {
		return nil, err
	}
	return p, nil
}

// AWS is the function's one AWS configuration, loaded on first use (a function that calls no
// AWS service loads none) and instrumented for tracing; each client sets its own timeouts.
func (p *Parts) AWS() (aws.Config, error) { return p.aws() }

func loadAWS(ctx context.Context, cfg config.Config, tracer *tracing.Tracer) (aws.Config, error) {
	c, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS configuration: %w", err)
	}
	if c.Region == "" {
		c.Region = cfg.AWSRegion
	}
	tracer.AWS(&c)
	return c, nil
}

// newProvider builds the configured knowledge provider. The RAGcore token is read once here: from
// the SSM SecureString RAGCORE_TOKEN_PARAMETER names when set, else from RAGCORE_TOKEN.
func (p *Parts) newProvider(ctx context.Context) (Provider, error) {
	cfg, log := p.Config, p.Log
	if cfg.Provider != "ragcore" {
		if p.Index == nil {
			return demo.ForCorpus(p.Corpus), nil // verification and sync need no index
		}
		return demo.WithEpochs(p.Epochs), nil
	}
	token, source := cfg.RAGcoreToken, "environment"
	if cfg.RAGcoreTokenParameter != "" {
		awsCfg, err := p.AWS()
		if err != nil {
			return nil, err
		}
		client := ssm.NewFromConfig(awsCfg, func(o *ssm.Options) {
			o.HTTPClient = awshttp.NewBuildableClient().WithTimeout(ssmTimeout)
		})
		if token, err = secret.Parameter(ctx, client, cfg.RAGcoreTokenParameter, ssmTimeout); err != nil {
			return nil, err
		}
		source = "ssm:" + cfg.RAGcoreTokenParameter
	}
	client, err := ragcore.New(ragcore.Options{BaseURL: cfg.RAGcoreBaseURL, Token: token, Timeout: cfg.RAGcoreTimeout,
		HTTPClient: p.Tracer.HTTP(ragcore.NewHTTPClient(cfg.RAGcoreTimeout)),
		Namespace:  domain.Namespace{Tenant: cfg.Tenant, Workspace: cfg.Workspace, Collection: cfg.Collection},
		Breaker:    ragcore.BreakerOptions{Failures: cfg.RAGcoreBreakerFailures, Cooldown: cfg.RAGcoreBreakerCooldown},
		Log:        log, Metrics: p.Metrics})
	if err != nil {
		return nil, err
	}
	log.InfoContext(ctx, "RAGcore provider", "token_source", source, "tenant", cfg.Tenant, "workspace", cfg.Workspace,
		"collection", cfg.Collection, "source_prefix", cfg.RAGcoreSourcePrefix, "timeout_ms", cfg.RAGcoreTimeout.Milliseconds(),
		"breaker_failures", cfg.RAGcoreBreakerFailures, "breaker_cooldown_ms", cfg.RAGcoreBreakerCooldown.Milliseconds())
	return ragcore.NewProvider(client, p.Corpus, ragcore.ProviderOptions{SourcePrefix: cfg.RAGcoreSourcePrefix, Log: log}), nil
}

// ssmTimeout bounds reading the token at a cold start.
const ssmTimeout = 3 * time.Second

// newStore returns the DynamoDB store in Lambda or with DYNAMODB_ENDPOINT, guarded so that a
// hanging table slows no response for long (store.Guard), else the in-memory one.
func (p *Parts) newStore() (store.Records, string, error) {
	cfg := p.Config
	if !cfg.UseDynamoDB() {
		return store.NewMemory().WithLogger(p.Log), "memory", nil
	}
	awsCfg, err := p.AWS()
	if err != nil {
		return nil, "", err
	}
	client := store.DynamoClientFrom(awsCfg, store.ClientOptions{Endpoint: cfg.DynamoDBEndpoint, Region: cfg.AWSRegion,
		HTTPTimeout: cfg.DynamoDBTimeout})
	d := store.NewDynamo(client, cfg.TableName, cfg.DynamoDBTimeout, nil)
	return store.Guard(d, store.GuardOptions{Wait: cfg.TraceWriteWait, Failures: cfg.DynamoDBBreakerFailures,
		Cooldown: cfg.DynamoDBBreakerCooldown, Log: p.Log, Metrics: p.Metrics}), "dynamodb:" + cfg.TableName, nil
}

// Namespace is the configured RAGcore namespace, as the store keys it.
func (p *Parts) Namespace() domain.Namespace {
	return domain.Namespace{Tenant: p.Config.Tenant, Workspace: p.Config.Workspace, Collection: p.Config.Collection}
}

// SidecarHealth is the sidecar's state for a function that does not run it (the status
// function's GET /health): disabled, or whether its configuration could make one, by the rules
// sidecar.New applies, without building the Bedrock client.
func (p *Parts) SidecarHealth() domain.SidecarHealth {
	cfg := p.Config
	if !cfg.SidecarEnabled {
		return domain.SidecarHealth{Status: domain.SidecarDisabled}
	}
	err := sidecarconf.Check(cfg.BedrockKnowledgeBase, cfg.BedrockEndpoint, cfg.SidecarTimeout)
	if err == nil {
		_, err = p.AWS()
	}
	if err != nil {
		p.Log.Error("sidecar could not be built; lookups report it failed", "error", err.Error())
		return domain.SidecarHealth{Enabled: true, Status: domain.SidecarFailed}
	}
	return domain.SidecarHealth{Enabled: true, Status: domain.SidecarOK}
}

// Status builds the status service (GET /status, GET /health) with the sidecar's state.
func (p *Parts) Status(side domain.SidecarHealth) (*status.Service, error) {
	verifier, ok := p.Provider.(port.Verifier)
	if !ok {
		return nil, fmt.Errorf("provider %s cannot verify its sources", p.Provider.Name())
	}
	cfg := p.Config
	return status.New(p.Corpus, p.Provider, verifier, p.Records, status.Options{Namespace: p.Namespace(),
		Concurrency: cfg.VerifyConcurrency, RequestTimeout: cfg.RAGcoreTimeout, Budget: cfg.VerifyBudget,
		Metrics: p.Metrics, Sidecar: side, NegativeTTL: cfg.VerifyNegativeTTL, Now: p.Now, TimeZone: cfg.Zone()}, p.Log), nil
}

// Sync builds the sync service (POST /sync, POST /sync-reports, the schedule).
func (p *Parts) Sync(st *status.Service) *indexsync.Service {
	return indexsync.New(p.Corpus, p.Provider, p.Records, st, p.Namespace(), p.Log).WithClock(p.Now, p.Config.Zone())
}

// Lookup builds the lookup service (POST /lookup, POST /ask, GET /invocations/{id}) with the
// optional sidecar (nil: off); nil without the index.
func (p *Parts) Lookup(side port.Sidecar) *retrieval.Service {
	if p.Index == nil {
		return nil
	}
	cfg := p.Config
	opts := retrieval.Options{L1Enabled: cfg.L1Enabled, TraceRetention: cfg.TraceRetention,
		ProviderTimeout: cfg.RAGcoreTimeout, GroundedCosine: cfg.GroundedCosine, SupportedCosine: cfg.SupportedCosine,
		Metrics: p.Metrics, Sidecar: side, SidecarTimeout: cfg.SidecarTimeout}
	return retrieval.New(p.Index, p.Provider, p.Records, opts, p.Log).
		WithVersions(p.Epochs, cfg.Zone(), cfg.UpcomingDays).WithClock(p.Now)
}

// Handler is the API handler of function f ("" for every function's routes), served by the
// services given: the routes api's route tables give f (the others answer 404 or 405).
func (p *Parts) Handler(f api.Function, s api.Services) *api.Handler {
	return api.NewFunction(f, s, api.AuthMode(p.Config.AuthMode), p.Log).WithTracer(p.Tracer)
}

// Initialised logs the end of the cold start.
func (p *Parts) Initialised(ctx context.Context, sidecarStatus domain.SidecarState) {
	if p.gcPercent >= 0 {
		debug.SetGCPercent(p.gcPercent)
		p.gcPercent = -1
	}
	attrs := []any{"provider", p.Provider.Name(), "store", p.StoreName,
		"dynamodb_endpoint", p.dynamoEndpoint(), "tracing", p.Tracer.Mode(), "tracing_active", p.Tracer.Active(),
		"sidecar", string(sidecarStatus), "knowledge", p.knowledgeSource, "analyses_questions", p.Index != nil}
	attrs = append(attrs, knowledgeAttrs(p.Corpus, knowledge.Today(p.Now(), p.Config.Zone()), p.Config.Zone().String())...)
	attrs = append(attrs, "init_ms", float64(time.Since(p.start).Microseconds())/1000)
	p.Log.InfoContext(ctx, "initialised", attrs...)
}

// dynamoEndpoint says loudly where records go: the DynamoDB Local endpoint, the AWS region's
// DynamoDB (an account's real table), or none (the in-memory store).
func (p *Parts) dynamoEndpoint() string {
	switch {
	case !p.Config.UseDynamoDB():
		return "none"
	case p.Config.DynamoDBEndpoint != "":
		return p.Config.DynamoDBEndpoint
	}
	return "aws:" + p.Config.AWSRegion
}

// SchedulerActorID names the scheduled refresh to RAGcore.
const SchedulerActorID = "service:scheduler"

// Refresh is the scheduled event's work: verify every language now and cache the results.
func Refresh(sy *indexsync.Service) func(ctx context.Context, eventID string) (any, error) {
	return func(ctx context.Context, eventID string) (any, error) {
		call := port.Call{Actor: port.Actor{ID: SchedulerActorID, Scopes: []string{"knowledge:read"}},
			CorrelationID: eventID}
		return map[string]any{"refreshed": sy.Refresh(ctx, call)}, nil
	}
}

// Must ends a function's start-up on err: the reason on stderr, which Lambda reports as an init
// error.
func Must[T any](v T, err error) T {
	if err != nil {
		fmt.Fprintln(os.Stderr, "init:", err)
		os.Exit(1)
	}
	return v
}

// FromEnv is a Lambda function's configuration, read once per cold start; a bad configuration
// ends the process with every bad variable on stderr.
func FromEnv() config.Config {
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return cfg
}
