// Package retrieval is the lookup_knowledge flow shared by the Lambda functions: L0 keyword and
// front-matter hints, the provider's L1 layer filtered by an unambiguous L0 domain, fusion into
// de-duplicated evidence blocks with provenance, the relevance judgement that decides between
// grounded and insufficient, and the compact invocation trace of every call.
package retrieval

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// Errors the transport maps to status codes.
var (
	ErrUnsupportedLanguage = errors.New("unsupported language")
	ErrNotFound            = errors.New("not found")
)

// TraceStore keeps invocation traces.
type TraceStore interface {
	PutTrace(ctx context.Context, t Trace) error
	GetTrace(ctx context.Context, invocationID string) (Trace, error) // ErrNotFound when absent or expired
}

// Metrics records metrics; obs.EMF implements it.
type Metrics interface {
	Count(name string, n int)
	// Emit records several metrics at once with extra dimensions.
	Emit(dims map[string]string, metrics ...Metric)
}

// Metric is one value of a metric, with its CloudWatch unit ("Count", "Milliseconds").
type Metric struct {
	Name  string
	Unit  string
	Value float64
}

// Options tune the service; the zero value is not valid, start from DefaultOptions.
type Options struct {
	// L1Enabled turns the L1 layer off when false (L1 status "disabled").
	L1Enabled bool
	// TraceRetention is how long traces are kept.
	TraceRetention time.Duration
	// ProviderTimeout bounds every provider call (Retrieve, Ask); <= 0 means no bound of its own.
	ProviderTimeout time.Duration
	// GroundedCoverage is the smallest coverage of the question by the primary block that counts as
	// strong evidence (see lexical.Lang.Coverage).
	GroundedCoverage float64
	// Metrics receives the TraceWriteFailures count; nil records nothing.
	Metrics Metrics
	// L0Weight is how much the L0 layer counts in fusion against the L1 layer (see fuse).
	L0Weight float64
	// Sidecar is the optional comparison path; nil means off: nothing is built or called.
	Sidecar Sidecar
	// SidecarTimeout bounds the sidecar's part in a lookup; the lookup never waits longer.
	SidecarTimeout time.Duration
}

// Sidecar is seed 000's disabled-by-default comparison path: it runs beside L1 under its own
// deadline and reports its results and a comparison with the main blocks, never changing them.
type Sidecar interface {
	// Query runs the sidecar; it never fails: a failure is a report with status "failed".
	Query(ctx context.Context, q Query) SidecarReport
	// Compare summarises the sidecar's results against the main evidence blocks.
	Compare(report SidecarReport, blocks []EvidenceBlock, scoreKind string) any
}

// DefaultOptions are the production settings; the evaluation set in eval/ measures them.
func DefaultOptions() Options {
	return Options{L1Enabled: true, TraceRetention: 30 * 24 * time.Hour, GroundedCoverage: GroundedCoverage, L0Weight: 1,
		ProviderTimeout: 2 * time.Second}
}

// GroundedCoverage is the default grounded threshold, shared with the demo provider's answers.
const GroundedCoverage = 0.45

// Service runs lookups and asks. It is safe for concurrent use.
type Service struct {
	ix       *lexical.Index
	provider KnowledgeProvider
	traces   TraceStore
	opts     Options
	log      *slog.Logger
	now      func() time.Time

	traceFailures atomic.Int64
}

// New builds the service.
func New(ix *lexical.Index, p KnowledgeProvider, traces TraceStore, opts Options, log *slog.Logger) *Service {
	return &Service{ix: ix, provider: p, traces: traces, opts: opts, log: log, now: time.Now}
}

// TraceFailures counts trace writes that failed since start.
func (s *Service) TraceFailures() int64 { return s.traceFailures.Load() }

// LookupRequest is a validated lookup.
type LookupRequest struct {
	Question      string
	Language      string
	TopK          int
	Actor         Actor
	CorrelationID string
}

// Lookup runs the lookup_knowledge flow and records its trace.
func (s *Service) Lookup(ctx context.Context, req LookupRequest) (Result, error) {
	l := s.ix.Lang(req.Language)
	if l == nil {
		return Result{}, ErrUnsupportedLanguage
	}
	start := s.now()
	// The question is analysed and sent on NFKC-normalised; the trace hashes it as received.
	text := textproc.Normalize(req.Question)
	words := l.Analyzer.QuestionGroups(text)
	query := uniqueTerms(textproc.Flatten(words))
	hints, matches := l0(l, query)
	l0Done := s.now()

	l1 := L1Details{Status: L1Disabled, Provider: s.provider.Name(), ScoreKind: s.provider.ScoreKind()}
	side := s.startSidecar(ctx, req, text, hints)
	var cands []Candidate
	if s.opts.L1Enabled {
		if len(hints.Domains) == 1 {
			l1.CategoryFilter = &hints.Domains[0]
		}
		q := Query{Question: text, Language: req.Language, TopK: l1Pool(req.TopK),
			Terms: query, Actor: req.Actor, CorrelationID: req.CorrelationID}
		if l1.CategoryFilter != nil {
			q.Category = *l1.CategoryFilter
		}
		pctx, cancel := s.providerContext(ctx)
		var err error
		cands, err = s.provider.Retrieve(pctx, q)
		cancel()
		switch {
		case errors.Is(err, ErrUnavailable):
			l1.Status, l1.ErrorClass = L1Unavailable, ErrorClass(err)
		case err != nil:
			l1.Status, l1.ErrorClass = L1Failed, ErrorClass(err)
		case len(cands) == 0:
			l1.Status = L1Empty
		default:
			l1.Status = L1OK
		}
		if err != nil {
			cands = nil
			s.log.WarnContext(ctx, "l1 retrieval failed", "correlation_id", req.CorrelationID,
				"provider", s.provider.Name(), "error_class", l1.ErrorClass, "error", SafeError(err))
		}
		l1.CandidateCount = len(cands)
	}
	l1Done := s.now()

	fused := leading(matches)
	if len(cands) == 0 {
		fused = matches // L1 has nothing: every L0 match is evidence
	}
	blocks := s.fuse(l, query, fused, cands, req.TopK)
	res := Result{
		EvidenceBlocks: blocks,
		Supplement:     []EvidenceBlock{},
		Provider:       s.provider.Name(),
		Retrieval: Details{
			Layer: layerOf(len(matches) > 0, len(cands) > 0), L0: hints, L1: l1,
			CandidateCount: min(len(fused), req.TopK) + len(cands), FinalBlockCount: len(blocks),
		},
	}
	if len(blocks) > 0 {
		res.Primary = &blocks[0]
		res.Supplement = blocks[1:]
	}
	res.Relevance = s.assess(l, words, blocks, l1)
	res.EvidenceState = evidenceState(res.Relevance, len(blocks), l1.Status)
	res.Retrieval.Sidecar = side.wait(blocks, s.provider.ScoreKind())

	res.InvocationID = newID()
	end := s.now()
	s.emit(ToolLookup, res.Retrieval.Layer, l1.Status, end.Sub(start))
	s.record(ctx, Trace{
		InvocationID: res.InvocationID, Tool: ToolLookup, ActorID: req.Actor.ID, Language: req.Language,
		RetrievalDetails: TraceDetails{
			Layer: res.Retrieval.Layer, EvidenceState: res.EvidenceState, L0: hints, L1: l1,
			CandidateCount: res.Retrieval.CandidateCount, FinalBlockCount: len(blocks),
			EvidenceSummaries: summaries(blocks),
			Sidecar:           res.Retrieval.Sidecar.SidecarStatus,
			LatencyMs:         Latency{L0: ms(l0Done.Sub(start)), L1: ms(l1Done.Sub(l0Done)), Total: ms(end.Sub(start))},
		},
	}, req.Question, req.CorrelationID)
	return res, nil
}

// pendingSidecar is a sidecar query in flight.
type pendingSidecar struct {
	s        *Service
	done     chan SidecarReport
	deadline time.Time
}

// startSidecar starts the sidecar beside L1, with the L0 domain as its filter when unambiguous,
// under its own deadline. Off, it does nothing.
func (s *Service) startSidecar(ctx context.Context, req LookupRequest, text string, hints L0Hints) *pendingSidecar {
	if s.opts.Sidecar == nil {
		return nil
	}
	p := &pendingSidecar{s: s, done: make(chan SidecarReport, 1), deadline: s.now().Add(s.opts.SidecarTimeout)}
	q := Query{Question: text, Language: req.Language, TopK: req.TopK, Actor: req.Actor, CorrelationID: req.CorrelationID}
	if len(hints.Domains) == 1 {
		q.Category = hints.Domains[0]
	}
	// The sidecar's context does not end with the caller's: its deadline alone bounds it.
	sctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), p.deadline)
	go func() {
		defer cancel()
		p.done <- s.opts.Sidecar.Query(sctx, q)
	}()
	return p
}

// wait takes the sidecar's report, waiting no longer than the sidecar's deadline (plus a
// moment for the report to arrive), and adds the comparison with the main blocks.
func (p *pendingSidecar) wait(blocks []EvidenceBlock, scoreKind string) SidecarReport {
	if p == nil {
		return SidecarReport{SidecarStatus: SidecarStatus{Status: "disabled"}}
	}
	t := time.NewTimer(time.Until(p.deadline) + sidecarGrace)
	defer t.Stop()
	var r SidecarReport
	select {
	case r = <-p.done:
	case <-t.C:
		r = SidecarReport{SidecarStatus: SidecarStatus{Status: "failed", ErrorClass: "timeout"}}
	}
	r.Enabled = true
	if r.Status == "ok" {
		r.Comparison = p.s.opts.Sidecar.Compare(r, blocks, scoreKind)
	}
	return r
}

// sidecarGrace is how long after its deadline a sidecar's report may still arrive.
const sidecarGrace = 20 * time.Millisecond

// emit records one call's metrics: its latency and count by layer and provider, and whether L1
// failed.
func (s *Service) emit(tool, layer, l1Status string, took time.Duration) {
	if s.opts.Metrics == nil {
		return
	}
	failed := 0.0
	if l1Status == L1Failed || l1Status == L1Unavailable {
		failed = 1
	}
	prefix := "Lookup"
	if tool == ToolAsk {
		prefix = "Ask"
	}
	s.opts.Metrics.Emit(map[string]string{"layer": layer, "provider": s.provider.Name()},
		Metric{Name: prefix + "Latency", Unit: "Milliseconds", Value: ms(took)},
		Metric{Name: prefix + "s", Unit: "Count", Value: 1},
		Metric{Name: "L1Failures", Unit: "Count", Value: failed})
}

// Invocation returns a stored trace to its own actor, or to an actor with knowledge:admin.
// Anyone else gets ErrNotFound, so that ids of other actors' calls cannot be probed.
func (s *Service) Invocation(ctx context.Context, id string, actor Actor) (Trace, error) {
	t, err := s.traces.GetTrace(ctx, id)
	if err != nil {
		return Trace{}, err
	}
	if t.ActorID != actor.ID && !actor.HasScope("knowledge:admin") {
		return Trace{}, ErrNotFound
	}
	return t, nil
}

// providerContext bounds one provider call.
func (s *Service) providerContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.opts.ProviderTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.opts.ProviderTimeout)
}

// record completes and stores a trace. A failed write never fails the caller's request: it is
// logged with the invocation id and counted. The write outlives a caller that hung up (the
// store's own deadline bounds it), so that every answered call leaves its trace.
func (s *Service) record(ctx context.Context, t Trace, question, correlationID string) {
	ctx = context.WithoutCancel(ctx)
	sum := sha256.Sum256([]byte(question))
	t.QuestionSHA256 = hex.EncodeToString(sum[:])
	t.QuestionChars = utf8.RuneCountInString(question)
	t.CreatedAt = s.now().UTC()
	t.ExpiresAt = t.CreatedAt.Add(s.opts.TraceRetention)
	if err := s.traces.PutTrace(ctx, t); err != nil {
		n := s.traceFailures.Add(1)
		if s.opts.Metrics != nil {
			s.opts.Metrics.Count("TraceWriteFailures", 1)
		}
		s.log.ErrorContext(ctx, "trace write failed; the response is unaffected",
			"correlation_id", correlationID, "invocation_id", t.InvocationID, "trace_failures", n, "error", SafeError(err))
	}
}

func layerOf(l0, l1 bool) string {
	switch {
	case l0 && l1:
		return LayerBoth
	case l0:
		return LayerL0
	case l1:
		return LayerL1
	}
	return LayerNone
}

func evidenceState(r Relevance, blocks int, l1Status string) string {
	switch {
	case blocks == 0 && (l1Status == L1Failed || l1Status == L1Unavailable):
		return StateUnavailable
	case r.Assessment == "strong":
		return StateGrounded
	}
	return StateInsufficient
}

// ErrorClass names an error for traces and logs without its message: the provider's own class,
// else "timeout", "canceled", "unavailable" or "error".
func ErrorClass(err error) string {
	var c interface{ ErrorClass() string }
	switch {
	case errors.As(err, &c):
		return c.ErrorClass()
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, ErrUnavailable):
		return "unavailable"
	}
	return "error"
}

// SafeError is an error's text for logs without the peer's URL, address or host name: an HTTP
// client's *url.Error names the URL (which could carry a question or a token in its query), and
// *net.OpError and *net.DNSError name internal hosts. An error that classifies itself
// (ErrorClass) is a provider's own, written to be safe, and is kept whole.
func SafeError(err error) string {
	if _, ok := err.(interface{ ErrorClass() string }); ok {
		return err.Error()
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return "name resolution failed"
	}
	var op *net.OpError
	if errors.As(err, &op) {
		if op.Err != nil {
			return op.Op + ": " + op.Err.Error()
		}
		return op.Op + " failed"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + " request: " + SafeError(ue.Err)
	}
	return err.Error()
}

func summaries(blocks []EvidenceBlock) []BlockSummary {
	out := make([]BlockSummary, 0, len(blocks))
	for _, b := range blocks {
		out = append(out, BlockSummary{Source: b.Source, Title: b.Title, RetrievalLayer: b.RetrievalLayer,
			Score: &b.Score, HitReasons: b.HitReasons, Content: Clip(b.Content, SummaryChars)})
	}
	return out
}

// Clip cuts s to at most n characters (runes), marking the cut with "…".
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// newID returns a random, URL-safe id (26 base32 characters, 128 bits).
func newID() string { return rand.Text() }

func uniqueTerms(terms []string) []string {
	out := terms[:0:0]
	for _, t := range terms {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// l1Pool is how many candidates L1 is asked for: twice the blocks wanted, at least 10, so that
// fusion and de-duplication choose from the same pool whatever top_k is.
func l1Pool(topK int) int { return min(max(2*topK, 10), 40) }
