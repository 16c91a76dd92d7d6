// Command ragcore-fake serves the in-memory RAGcore v1 fake (internal/ragcorefake) over HTTP, so
// the service can run locally against something that behaves like RAGcore, errors and delays
// included. It is a test double, not a RAG platform: nothing it answers is real.
//
//	go run ./cmd/ragcore-fake -addr 127.0.0.1:8089 -token t
//
// By default it preloads the embedded procedures as published documents and publishes uploads at
// once. It logs one JSON line per request to stderr, never the token or a body, and stops
// gracefully on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/felixge/httpsnoop"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ragcorefake"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	appconfig "github.com/northstar-mobility/mobilityops-knowledge/shared/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	default:
		fmt.Fprintln(os.Stderr, "ragcore-fake:", err)
		stop()
		os.Exit(1)
	}
}

// config is the parsed command line.
type config struct {
	addr, token                   string
	tenant, workspace, collection string
	sourcePrefix, knowledgeDir    string
	preload, publishUploads       bool
	skip                          []string
	latency                       time.Duration
	errorRate                     float64
	failStatus                    int
	seed                          int64
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	var skip string
	fs := flag.NewFlagSet("ragcore-fake", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8089", "listen address")
	fs.StringVar(&c.token, "token", "local-token", "bearer token every request must carry")
	fs.StringVar(&c.tenant, "tenant", appconfig.DefaultTenant, "tenant served")
	fs.StringVar(&c.workspace, "workspace", appconfig.DefaultWorkspace, "workspace served")
	fs.StringVar(&c.collection, "collection", appconfig.DefaultCollection, "collection served")
	fs.StringVar(&c.sourcePrefix, "source-prefix", appconfig.DefaultRAGcoreSourcePrefix, "source_id prefix of preloaded documents (<prefix>-<language>)")
	fs.StringVar(&c.knowledgeDir, "knowledge-dir", "", "folder of <language>/<id>.md procedures to preload (default: the embedded ones)")
	fs.BoolVar(&c.preload, "preload", true, "index the procedures at start, as after a complete sync")
	fs.StringVar(&skip, "skip", "", `comma-separated "<lang>/<id>" procedures left out of the preload`)
	fs.BoolVar(&c.publishUploads, "publish-uploads", true, `uploaded versions are "published" at once (else they stay "processing")`)
	fs.DurationVar(&c.latency, "latency", 0, "delay before every answer")
	fs.Float64Var(&c.errorRate, "error-rate", 0, "share (0..1) of requests answered with -fail-status")
	fs.IntVar(&c.failStatus, "fail-status", http.StatusInternalServerError, "status of the -error-rate failures (a 429 carries Retry-After: 1)")
	fs.Int64Var(&c.seed, "seed", 1, "seed of the -error-rate random source")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for item := range strings.SplitSeq(skip, ",") {
		if item = strings.TrimSpace(item); item != "" {
			c.skip = append(c.skip, item)
		}
	}
	var errs []error
	if c.token == "" {
		errs = append(errs, errors.New("-token must not be empty"))
	}
	if c.latency < 0 {
		errs = append(errs, fmt.Errorf("-latency %v must not be negative", c.latency))
	}
	if c.errorRate < 0 || c.errorRate > 1 {
		errs = append(errs, fmt.Errorf("-error-rate %v must be between 0 and 1", c.errorRate))
	}
	if c.failStatus < 400 || c.failStatus > 599 {
		errs = append(errs, fmt.Errorf("-fail-status %d must be a 4xx or 5xx status", c.failStatus))
	}
	return c, errors.Join(errs...)
}

// newFake builds the fake server c describes.
func newFake(c config) (*ragcorefake.Server, error) {
	fake := ragcorefake.New(ragcorefake.Options{
		Token: c.token, Tenant: c.tenant, Workspace: c.workspace, Collection: c.collection,
		PublishUploads: c.publishUploads, Seed: c.seed,
	})
	fake.SetFaults(ragcorefake.Faults{Latency: c.latency, ErrorRate: c.errorRate, ErrorStatus: c.failStatus})
	if !c.preload {
		return fake, nil
	}
	corpus, err := loadCorpus(c.knowledgeDir)
	if err != nil {
		return nil, err
	}
	// An unknown id would silently skip nothing, and the missing-document scenario would not be
	// the one asked for.
	for _, k := range c.skip {
		lang, id, ok := strings.Cut(k, "/")
		if !ok || corpus.Document(lang, id) == nil {
			return nil, fmt.Errorf("-skip %q is not a <lang>/<id> procedure of the corpus", k)
		}
	}
	fake.LoadCorpus(corpus, c.sourcePrefix, c.skip...)
	return fake, nil
}

func loadCorpus(dir string) (*knowledge.Corpus, error) {
	if dir == "" {
		return knowledge.Embedded()
	}
	return knowledge.LoadDir(dir)
}

// run serves until ctx ends. It prints the listening line to stdout once requests are accepted,
// so scripts and tests can wait for it, and logs requests to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	fake, err := newFake(c)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil)).With("service", "ragcore-fake")
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           logRequests(log, fake),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		// No WriteTimeout: -latency and injected slow bodies are meant to outlast any default,
		// and it is the client's deadline that is under test.
		IdleTimeout: 60 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "ragcore-fake listening on http://%s\n", ln.Addr())

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		// Requests still waiting out a long -latency would hold the process; end them.
		_ = srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// logRequests logs method, path, status, duration and correlation id of every request. The
// query string, headers and bodies stay out: the token travels in a header, and bodies carry
// questions. Status 0 means the fake answered nothing because the request ended first.
func logRequests(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		status := 0
		// httpsnoop keeps the writer's Flusher, which injected slow bodies rely on.
		next.ServeHTTP(httpsnoop.Wrap(w, httpsnoop.Hooks{
			WriteHeader: func(next httpsnoop.WriteHeaderFunc) httpsnoop.WriteHeaderFunc {
				return func(code int) {
					if status == 0 {
						status = code
					}
					next(code)
				}
			},
			Write: func(next httpsnoop.WriteFunc) httpsnoop.WriteFunc {
				return func(b []byte) (int, error) {
					if status == 0 {
						status = http.StatusOK
					}
					return next(b)
				}
			},
		}), r)
		log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", status),
			slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
			slog.String("correlation_id", r.Header.Get("X-Correlation-Id")),
		)
	})
}
