// Command calibrate measures the lookup's grounded verdict on labelled questions against the
// configured knowledge provider, over a grid of the semantic thresholds L1_GROUNDED_COSINE and
// L1_SUPPORTED_COSINE, and recommends a pair (docs/operations.md, "Calibrating the grounded
// thresholds"):
//
//	go run ./cmd/calibrate -fake eval/calibrate-dev.jsonl eval/natural-dev.yaml
//
// A set is JSON Lines of {"question", "language", "expect"} (expect a procedure id, or null when
// no procedure answers; a null or missing language is detected as the API detects it), or one of
// the evaluation YAML files of eval/. The provider and its settings are the ones the functions
// read from the environment (KNOWLEDGE_PROVIDER, RAGCORE_BASE_URL, RAGCORE_TOKEN, ...); -fake
// serves the fake RAGcore in the process instead, with the corpus published. Each distinct query
// is sent once and its candidates are reused at every pair; the verdict is the lookup service's
// own. Nothing is written: traces stay in memory and procedures are never synced.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ragcorefake"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/wire"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	default:
		fmt.Fprintln(os.Stderr, "calibrate:", err)
		stop()
		os.Exit(1)
	}
}

// options are the parsed command line.
type options struct {
	fake, json        bool
	grounded, gap     steps
	limits            limits
	timeout           time.Duration
	concurrency, topK int
	rows              int
	sets, holdout     []string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	o := options{limits: limits{MaxWrong: 0.03, MaxNegatives: 0.05}}
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: calibrate [flags] <set.jsonl|eval.yaml>...\n\n"+
			"Measures grounded over a grid of L1_GROUNDED_COSINE and L1_SUPPORTED_COSINE against the provider\n"+
			"the environment configures (KNOWLEDGE_PROVIDER, RAGCORE_BASE_URL, RAGCORE_TOKEN, ...), or -fake;\n"+
			"read-only. docs/operations.md, \"Calibrating the grounded thresholds\", says how to read it.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	fs.BoolVar(&o.fake, "fake", false, "serve the fake RAGcore in the process, with the corpus published, instead of the configured provider")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON")
	grounded := fs.String("grounded", "0.30:0.90:0.01", "L1_GROUNDED_COSINE values, from:to:step")
	gap := fs.String("supported-gap", "0:0.20:0.05", "how far L1_SUPPORTED_COSINE is below L1_GROUNDED_COSINE, from:to:step")
	fs.Float64Var(&o.limits.MaxWrong, "max-wrong", o.limits.MaxWrong, "highest wrong-grounded rate a recommended pair may have (share of answerable questions)")
	fs.Float64Var(&o.limits.MaxNegatives, "max-negatives", o.limits.MaxNegatives, "highest share of the questions no procedure answers a recommended pair may ground")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "deadline of each lookup (each provider call also has RAGCORE_TIMEOUT_MS)")
	fs.IntVar(&o.concurrency, "concurrency", max(4, runtime.GOMAXPROCS(0)), "lookups at once, and so provider calls at most at once")
	fs.IntVar(&o.topK, "top-k", 5, "top_k of every lookup")
	fs.IntVar(&o.rows, "rows", 20, "most rows of the table, 0 for all (the Pareto front, thinned; the configured and recommended rows are always shown)")
	fs.Func("holdout", "a set measured at the configured and recommended pairs but never used to choose (repeatable)", func(s string) error {
		o.holdout = append(o.holdout, s)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.sets = fs.Args()
	var errs []error
	for _, a := range o.sets {
		if strings.HasPrefix(a, "-") {
			errs = append(errs, fmt.Errorf("%s: flags go before the sets", a))
			break
		}
	}
	var err error
	if o.grounded, err = parseSteps(*grounded); err != nil {
		errs = append(errs, fmt.Errorf("-grounded %w", err))
	}
	if o.gap, err = parseSteps(*gap); err != nil {
		errs = append(errs, fmt.Errorf("-supported-gap %w", err))
	}
	if len(o.sets) == 0 {
		errs = append(errs, errors.New("no question set given (JSON Lines or evaluation YAML files)"))
	}
	if o.limits.MaxWrong < 0 || o.limits.MaxWrong > 1 || o.limits.MaxNegatives < 0 || o.limits.MaxNegatives > 1 {
		errs = append(errs, errors.New("-max-wrong and -max-negatives must be from 0 to 1"))
	}
	if o.timeout <= 0 {
		errs = append(errs, errors.New("-timeout must be positive"))
	}
	if o.concurrency < 1 || o.concurrency > 64 {
		errs = append(errs, errors.New("-concurrency must be from 1 to 64"))
	}
	if o.topK < 1 || o.topK > 20 {
		errs = append(errs, errors.New("-top-k must be from 1 to 20"))
	}
	return o, errors.Join(errs...)
}

// fakeToken is the bearer token of the in-process fake RAGcore.
const fakeToken = "calibrate-local-token"

// run calibrates as args say, with the configuration getenv reads, and prints the report to stdout.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	var fake *httptest.Server
	if o.fake {
		// The listener exists before the fake does, so that the configuration names its URL;
		// the fake is built from the configuration's namespace and the corpus wire loads.
		fake = httptest.NewUnstartedServer(nil)
		defer fake.Close()
		getenv = fakeEnv(getenv, "http://"+fake.Listener.Addr().String())
	}
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return err
	}
	// Read-only: traces stay in memory, whatever DYNAMODB_ENDPOINT or the Lambda runtime says,
	// and no sidecar is asked.
	cfg.DynamoDBEndpoint, cfg.InLambda, cfg.SidecarEnabled = "", false, false
	// The service's logs and metrics are left out: a failed retrieval is counted and reported
	// by error class, and a line per lookup at every pair would drown the report.
	parts, err := wire.New(ctx, cfg, io.Discard, wire.Needs{Index: true})
	if err != nil {
		return err
	}
	if fake != nil {
		f := ragcorefake.New(ragcorefake.Options{Token: fakeToken, Tenant: cfg.Tenant, Workspace: cfg.Workspace,
			Collection: cfg.Collection, PublishUploads: true, Seed: 1})
		f.LoadCorpus(parts.Corpus, cfg.RAGcoreSourcePrefix)
		fake.Config.Handler = f
		fake.Start()
	}
	var sets []set
	for _, path := range o.sets {
		qs, err := load(path, parts.Corpus)
		if err != nil {
			return err
		}
		sets = append(sets, set{Path: path, Questions: qs})
	}
	for _, path := range o.holdout {
		qs, err := load(path, parts.Corpus)
		if err != nil {
			return err
		}
		sets = append(sets, set{Path: path, Holdout: true, Questions: qs})
	}

	c := &calibration{opts: o, parts: parts, provider: newCached(parts.Provider), traces: store.NewMemory(),
		configured: pair{Grounded: cfg.GroundedCosine, Supported: cfg.SupportedCosine}}
	rep, err := c.run(ctx, sets)
	if err != nil {
		return err
	}
	if o.json {
		return rep.writeJSON(stdout)
	}
	return rep.writeText(stdout)
}

// fakeEnv is getenv with the provider set to the fake RAGcore at url.
func fakeEnv(getenv func(string) string, url string) func(string) string {
	return func(name string) string {
		switch name {
		case "KNOWLEDGE_PROVIDER":
			return "ragcore"
		case "RAGCORE_BASE_URL":
			return url
		case "RAGCORE_TOKEN":
			return fakeToken
		case "RAGCORE_TOKEN_PARAMETER":
			return ""
		}
		return getenv(name)
	}
}

// calibration measures the sets over the grid.
type calibration struct {
	opts       options
	parts      *wire.Parts
	provider   *cached
	traces     *store.Memory
	configured pair
}

// service is the lookup service the functions build (wire's Lookup), with the thresholds of p,
// the cached provider and the in-memory trace store.
func (c *calibration) service(p pair) *retrieval.Service {
	parts := *c.parts
	parts.Provider, parts.Records = c.provider, c.traces
	parts.Config.GroundedCosine, parts.Config.SupportedCosine = p.Grounded, p.Supported
	return parts.Lookup(nil)
}

// semantic reports whether the thresholds apply: the provider's L1 search is semantic, on and
// of a score kind with grounded thresholds.
func (c *calibration) semantic() bool {
	p := c.parts.Provider
	sc, ok := retrieval.ScaleOf(p.ScoreKind())
	return c.parts.Config.L1Enabled && p.Semantic() && ok && sc.Grounded > 0
}

// measured is one set of questions looked up at some pairs.
type measured struct {
	qs []labelled
	// outcomes[i][j] is question j's outcome at pair i.
	outcomes [][]outcome
	// failed[j] is the error class of question j's first failed retrieval, "" when none failed:
	// a question whose retrieval failed at any pair is left out of every pair's counts, so that
	// every pair is measured on the same questions.
	failed []string
}

// lookups looks every question up at every pair, concurrency lookups at once.
func (c *calibration) lookups(ctx context.Context, qs []labelled, pairs []pair) (measured, error) {
	m := measured{qs: qs, outcomes: make([][]outcome, len(pairs)), failed: make([]string, len(qs))}
	for i, p := range pairs {
		svc := c.service(p)
		out := make([]outcome, len(qs))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(c.opts.concurrency)
		for j, q := range qs {
			g.Go(func() error {
				lctx, cancel := context.WithTimeout(gctx, c.opts.timeout)
				defer cancel()
				res, err := svc.Lookup(lctx, lookup.LookupRequest{Question: q.Question, Language: q.Language,
					TopK: c.opts.topK, Actor: port.Actor{ID: "calibrate", Scopes: []string{"knowledge:read"}},
					CorrelationID: fmt.Sprintf("calibrate-%d-%d", i, j)})
				if err != nil {
					return fmt.Errorf("%s: %w", q.Where, err)
				}
				if s := res.Retrieval.L1.Status; (s == lookup.L1Failed || s == lookup.L1Unavailable) && m.failed[j] == "" {
					m.failed[j] = cmp.Or(res.Retrieval.L1.ErrorClass, string(s))
				}
				primary := ""
				if res.Primary != nil {
					primary = res.Primary.DocumentID
				}
				out[j] = judge(res.EvidenceState == port.StateGrounded, primary, q.Expect)
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return m, err
		}
		if err := ctx.Err(); err != nil {
			return m, err
		}
		m.outcomes[i] = out
		if i == 0 && len(qs) > 0 && m.failures() == len(qs) {
			return m, fmt.Errorf("the provider failed every question's retrieval (%s)", m.errorClasses())
		}
	}
	return m, nil
}

// counts are pair i's outcomes over the questions whose retrieval never failed.
func (m measured) counts(i int) counts {
	var c counts
	for j, q := range m.qs {
		if m.failed[j] == "" {
			c.add(q.Expect, m.outcomes[i][j])
		}
	}
	return c
}

// failures is the number of questions left out because their retrieval failed.
func (m measured) failures() int {
	n := 0
	for _, f := range m.failed {
		if f != "" {
			n++
		}
	}
	return n
}

// errorClasses counts the failed questions by error class, "timeout 3, unavailable 1".
func (m measured) errorClasses() string {
	by := map[string]int{}
	var order []string
	for _, f := range m.failed {
		if f == "" {
			continue
		}
		if by[f] == 0 {
			order = append(order, f)
		}
		by[f]++
	}
	parts := make([]string, len(order))
	for i, f := range order {
		parts[i] = fmt.Sprintf("%s %d", f, by[f])
	}
	return strings.Join(parts, ", ")
}
