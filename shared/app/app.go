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

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/obs"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// App is the wired service.
type App struct {
	Config  config.Config
	Corpus  *knowledge.Corpus
	Service *retrieval.Service
	Records store.Records
	Handler *api.Handler
	Log     *slog.Logger
}

// New builds the application. out receives logs and metrics (stdout in Lambda).
func New(ctx context.Context, cfg config.Config, out io.Writer) (*App, error) {
	log := obs.NewLogger(out, cfg.LogLevel, cfg.FunctionName)
	start := time.Now()
	corpus, err := loadCorpus(cfg)
	if err != nil {
		return nil, err
	}
	ix := lexical.Build(corpus)
	provider := demo.New(ix)
	opts := retrieval.DefaultOptions()
	opts.L1Enabled = cfg.L1Enabled
	opts.TraceRetention = cfg.TraceRetention
	opts.ProviderTimeout = cfg.RAGcoreTimeout
	opts.Metrics = obs.NewEMF(out, cfg.FunctionName)
	records, storeName, err := newStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	svc := retrieval.New(ix, provider, records, opts, log)
	log.InfoContext(ctx, "initialised", "provider", provider.Name(), "store", storeName,
		"documents_en", len(corpus.Documents("en")), "documents_de", len(corpus.Documents("de")),
		"init_ms", float64(time.Since(start).Microseconds())/1000)
	return &App{Config: cfg, Corpus: corpus, Service: svc, Records: records,
		Handler: api.New(svc, api.AuthMode(cfg.AuthMode), log), Log: log}, nil
}

// newStore returns the DynamoDB store in Lambda or with DYNAMODB_ENDPOINT, else the in-memory one.
func newStore(ctx context.Context, cfg config.Config) (store.Records, string, error) {
	if !cfg.UseDynamoDB() {
		return store.NewMemory(), "memory", nil
	}
	client, err := store.NewDynamoClient(ctx, store.ClientOptions{Endpoint: cfg.DynamoDBEndpoint, Region: cfg.AWSRegion,
		HTTPTimeout: cfg.DynamoDBTimeout})
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
