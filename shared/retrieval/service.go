// Package retrieval is the lookup_knowledge flow shared by the Lambda functions: L0 keyword and
// front-matter hints, the provider's L1 layer filtered by an unambiguous L0 domain, fusion into
// de-duplicated evidence blocks with provenance, the relevance judgement that decides between
// grounded and insufficient, and the compact invocation trace of every call.
package retrieval

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/span"
)

// TraceStore keeps invocation traces.
type TraceStore interface {
	PutTrace(ctx context.Context, t lookup.Trace) error
	GetTrace(ctx context.Context, invocationID string) (lookup.Trace, error) // ErrNotFound when absent or expired
}

// Options are what the deployment configures; the zero value is valid (L1 off, traces kept
// config.DefaultTraceRetention, no provider deadline of the service's own, no semantic grounded
// thresholds), and DefaultOptions are the configuration's defaults. The ranking's and the verdict's
// own figures are constants: fusionK, l0FusionWeight, SameDocPenalty, LexicalWordPoints,
// LexicalMinPoints, the score scales (ScaleOf) and the paths' agreement.
type Options struct {
	// L1Enabled turns the L1 layer on; off, L1's status is "disabled".
	L1Enabled bool
	// TraceRetention is how long traces are kept; zero means config.DefaultTraceRetention.
	TraceRetention time.Duration
	// ProviderTimeout bounds every provider call (Retrieve, Ask); <= 0 means no bound of its own.
	ProviderTimeout time.Duration
	// GroundedCosine and SupportedCosine are the semantic grounded thresholds of a cosine
	// similarity L1 score (ScoreScale.Grounded and Supported); zero means none.
	GroundedCosine, SupportedCosine float64
	// Metrics receives the TraceWriteFailures count; nil records nothing.
	Metrics domain.Metrics
	// Sidecar is the optional comparison path; nil means off: nothing is built or called.
	Sidecar port.Sidecar
	// SidecarTimeout bounds the sidecar's part in a lookup; the lookup never waits longer.
	SidecarTimeout time.Duration
}

// DefaultOptions are the configuration's defaults, for callers without a configuration (the
// evaluation and calibration tools, tests); the evaluation set in eval/ measures them.
func DefaultOptions() Options {
	return Options{L1Enabled: config.DefaultL1Enabled, TraceRetention: config.DefaultTraceRetention,
		ProviderTimeout: config.DefaultRAGcoreTimeout, GroundedCosine: config.DefaultGroundedCosine,
		SupportedCosine: config.DefaultSupportedCosine}
}

// Service runs lookups and asks. It is safe for concurrent use.
type Service struct {
	// epochs holds the analysed index of each set of versions in force (see versions.go).
	epochs       *lexical.Epochs
	loc          *time.Location
	upcomingDays int
	provider     LookupProvider
	// paths are the evidence paths the verdict weighs (evidencePaths).
	paths  []evidencePath
	traces TraceStore
	opts   Options
	log    *slog.Logger
	now    func() time.Time

	traceFailures atomic.Int64
	// todaySince is the effective date from which today's set of versions is in force, as the
	// last lookup of today saw it: its change is the switch at midnight, logged once.
	todaySince atomic.Pointer[string]
	// today is the last day a call without a date answered from (see epoch): a day's text is
	// made once, not at every lookup.
	today atomic.Pointer[string]
}

// New builds the service over one index, whatever the day; WithVersions serves the versions in
// force on the day asked instead.
func New(ix *lexical.Index, p LookupProvider, traces TraceStore, opts Options, log *slog.Logger) *Service {
	return &Service{epochs: lexical.Single(ix), loc: time.UTC, provider: p, paths: evidencePaths[:], traces: traces, opts: opts,
		log: log, now: time.Now}
}

// TraceFailures counts trace writes that failed since start.
func (s *Service) TraceFailures() int64 { return s.traceFailures.Load() }

// Lookup runs the lookup_knowledge flow and records its trace.
func (s *Service) Lookup(ctx context.Context, req lookup.LookupRequest) (lookup.Result, error) {
	o, err := s.lookupTraced(ctx, req)
	o.release() // the result holds neither the views nor the ranked blocks
	return o.Result, err
}

// LookupSignals is Lookup with the measurements its assessment decided on, for evaluation tools.
func (s *Service) LookupSignals(ctx context.Context, req lookup.LookupRequest) (lookup.Result, Signals, error) {
	o, err := s.lookupTraced(ctx, req)
	if err != nil {
		return lookup.Result{}, Signals{}, err
	}
	sg := o.relevance.Signals()
	o.release()
	return o.Result, sg, nil
}

// lookupTraced runs the lookup flow with the sidecar, and records its trace.
func (s *Service) lookupTraced(ctx context.Context, req lookup.LookupRequest) (outcome, error) {
	start := s.now()
	v, ep := s.epoch(req.AsOf)
	l := ep.Index.Lang(req.Language)
	if l == nil {
		return outcome{}, domain.ErrUnsupportedLanguage
	}
	if _, err := confine(l, req.Procedure); err != nil {
		return outcome{}, err
	}
	q := analyseQuestion(l, req.Question)
	defer q.release()
	res, lat := s.lookup(ctx, l, v, req, q, true)
	res.Retrieval.Sidecar = lat.sidecar.wait(res.EvidenceBlocks[:res.Retrieval.FinalBlockCount], s.provider.ScoreKind())
	res.InvocationID = newID()
	span.Annotate(ctx, span.Annotations{Provider: s.provider.Name(), EvidenceState: string(res.EvidenceState),
		Language: req.Language, Layer: string(res.Retrieval.Layer), InvocationID: res.InvocationID})
	end := s.now()
	s.emit(lookup.ToolLookup, res.Retrieval.Layer, res.Retrieval.L1.Status, end.Sub(start))
	s.record(ctx, lookup.Trace{
		InvocationID: res.InvocationID, Tool: lookup.ToolLookup, ActorID: req.Actor.ID, Language: req.Language,
		RetrievalDetails: lookup.TraceDetails{
			Layer: res.Retrieval.Layer, EvidenceState: res.EvidenceState, L0: res.Retrieval.L0, L1: res.Retrieval.L1,
			CandidateCount: res.Retrieval.CandidateCount, FinalBlockCount: res.Retrieval.FinalBlockCount,
			EvidenceSummaries: summaries(res.EvidenceBlocks, res.blocks),
			Sidecar:           res.Retrieval.Sidecar.SidecarStatus,
			LatencyMs:         lookup.Latency{L0: ms(lat.l0.Sub(start)), L1: ms(lat.l1.Sub(lat.l0)), Total: ms(end.Sub(start))},
			AsOf:              v.day, AsOfRequested: v.asked,
			Procedure: req.Procedure, Clarification: optionIDs(res.Relevance.Clarification),
			Complements: complementIDs(res.Relevance.Complements),
		},
	}, req.Question, req.CorrelationID)
	return res, nil
}

// lookupCall is one lookup as its steps read it: the day's index of the question's language, the
// day's versions, the request, the procedure it is confined to and the question analysed once.
type lookupCall struct {
	l    *lexical.Lang
	day  dayView
	req  lookup.LookupRequest
	conf confinement
	q    *question
	// sc is the lookup's scratch, which also lends L1 its candidates' array.
	sc *l0Scratch
	// searched are the lexical search's best sections of the whole index (lexicalPool), once
	// made (lexicalHits).
	searched     []lexical.Hit
	searchedDone bool
}

// lexicalHits is the lookup's unfiltered lexical search of the local sections, made once: the
// check of a filtered semantic call (outsideFilter) and the lexical path read the same hits.
func (c *lookupCall) lexicalHits() []lexical.Hit {
	if !c.searchedDone {
		c.searched, c.searchedDone = c.l.SearchWeighted(c.q.terms, c.q.weights, "", lexicalPool), true
	}
	return c.searched
}

// stages are the moments a lookup finished its layers, and its sidecar query in flight.
type stages struct {
	l0, l1  time.Time
	sidecar *pendingSidecar
}

// lookup is the lookup flow without its trace: L0 hints, L1 (filtered by a strong single L0
// domain, unfiltered again when the filtered call is empty or weak), fusion and the judgement.
// The sidecar, when on and asked for, runs beside L1. q is the request's question, analysed once
// (analyseQuestion).
func (s *Service) lookup(ctx context.Context, l *lexical.Lang, v dayView, req lookup.LookupRequest, q *question,
	sidecar bool) (outcome, stages) {
	var st stages
	sc := getL0Scratch() // the matches are read until the result is made
	defer sc.release()
	conf, _ := confine(l, req.Procedure) // checked by the caller
	c := &lookupCall{l: l, day: v, req: req, conf: conf, q: q, sc: sc}
	_, end := span.Start(ctx, "l0")
	hints, matches := l0(l, q, req.TopK, sc)
	others := conf.others(l, q, matches)
	matches = conf.matches(matches)
	end()
	st.l0 = s.now()

	l1 := lookup.L1Details{Status: lookup.L1Disabled, Provider: s.provider.Name(), ScoreKind: s.provider.ScoreKind()}
	if sidecar {
		st.sidecar = s.startSidecar(ctx, req, q.text, hints)
	}
	var cands, outdated []port.Candidate
	if s.opts.L1Enabled {
		cands, outdated = s.layerL1(ctx, c, hints, &l1)
	}
	st.l1 = s.now()

	fused := lexical.Leading(matches)
	if len(cands) == 0 {
		fused = matches // L1 has nothing: every L0 match is evidence
	}
	_, end = span.Start(ctx, "fusion")
	blocks, evidence, fused0 := s.fuse(l, fused, cands, req.TopK, len(outdated), sc.reasons)
	switch {
	case conf.on():
		blocks, evidence = rankConfined(l, conf, q, blocks, req.TopK, len(outdated))
	case s.provider.Semantic() || l1.Status != lookup.L1OK:
		// A lexical provider's candidates are the focused search itself, which ranks each
		// procedure's sections as placeBestSection's search of one procedure does.
		blocks, evidence = placeBestSection(l, q, blocks, evidence, req.TopK, len(outdated))
	}
	end()
	views := s.views(ctx, c, cands, l1, matches[:min(len(matches), req.TopK)])
	_, end = span.Start(ctx, "verdict")
	defer end()
	parts := s.sentenceComplements(ctx, c, blocks, s.complementsOf(c, blocks, views, others))
	if len(parts) > 0 {
		blocks, evidence = placeComplements(l, parts, blocks, req.TopK, len(outdated))
	}
	rel := s.judge(c, blocks, l1, views, matches, parts)
	blocks, evidence = showAlternatives(l, rel, blocks, evidence, req.TopK, len(outdated))
	ownReasons(l, q, blocks)
	v.announce(req.Language, blocks)
	res := outcome{
		Result: lookup.Result{
			AsOf:           v.day,
			Procedure:      req.Procedure,
			EvidenceBlocks: evidence,
			Provider:       s.provider.Name(),
			Retrieval: lookup.Details{
				Layer: layerOf(len(matches) > 0, len(cands) > 0), L0: hints, L1: l1,
				CandidateCount: min(len(fused), req.TopK) + len(cands), FinalBlockCount: len(blocks),
			},
		},
		blocks: blocks,
		views:  views,
		ranked: fused0,
	}
	res.relevance = rel
	res.EvidenceState = evidenceState(res.relevance.Relevance, len(blocks), l1.Status)
	if len(outdated) > 0 {
		// After the evidence, in the room fuse left for them: primary and supplement stay the
		// blocks of the versions in force.
		res.EvidenceBlocks = append(res.EvidenceBlocks,
			outdatedBlocks(outdated, s.provider.ScoreKind(), true, l1Reason(s.provider.ScoreKind()), len(blocks))...)
	}
	if reason := v.nothingInForce(l); reason != "" {
		res.EvidenceState, res.relevance.Reason = port.StateUnavailable, reason
	}
	res.respond()
	return res, st
}

// views are the evidence paths' rankings the verdict weighs (rankPaths). The demo provider's
// candidates are the lexical path itself, unless a category filter narrowed them; otherwise the
// local sections are searched.
func (s *Service) views(ctx context.Context, c *lookupCall, cands []port.Candidate, l1 lookup.L1Details,
	matches []lexical.FrontMatch) *pathViews {
	_, end := span.Start(ctx, "lexical")
	defer end()
	in := pathInput{l: c.l, q: c.q, conf: c.conf, cands: cands, semantic: s.provider.Semantic(),
		scoreKind:    s.provider.ScoreKind(),
		lexicalCands: !s.provider.Semantic() && l1.Status == lookup.L1OK && (l1.CategoryFilter == nil || l1.UnfilteredRetry),
		matches:      matches}
	if !in.lexicalCands && !c.conf.on() {
		in.searched = c.lexicalHits()
	}
	return s.rankPaths(in)
}

// judge is the lookup's relevance: the confirmed procedure's verdict, or the paths' verdict with
// its clarification when the procedures cover a question they do not decide; the complements
// named either way.
func (s *Service) judge(c *lookupCall, blocks []ranked, l1 lookup.L1Details, views *pathViews, matches []lexical.FrontMatch,
	parts []part) judgement {
	l, q := c.l, c.q
	if c.conf.on() {
		r := s.assessConfirmed(l, q, blocks, l1, views)
		nameComplements(l, q, parts, &r)
		return r
	}
	r := s.assess(l, q, blocks, l1, views)
	nameComplements(l, q, parts, &r)
	if r.Assessment == lookup.AssessmentWeak && r.covered {
		r.Clarification = clarification(l, blocks[0].DocumentID, r.Alternatives, matches)
	}
	return r
}

// complementsOf finds the complements of the primary block's procedure among the procedures the
// paths rank (and, for a confined lookup, those of the unconfined local pass), each with its
// best section (complements finds it); none without evidence blocks.
func (s *Service) complementsOf(c *lookupCall, blocks []ranked, views *pathViews, others []int) []part {
	if len(blocks) == 0 {
		return nil
	}
	return complements(c.l, c.q, c.l.DocIndex(blocks[0].DocumentID), views, others)
}

// layerL1 calls L1 for the day's versions, filtered by a strong single L0 domain and unfiltered
// again when the filtered call is empty or weak, and records the calls and their outcome in l1;
// it returns the candidates in force and the outdated ones.
func (s *Service) layerL1(ctx context.Context, c *lookupCall, hints lookup.L0Hints, l1 *lookup.L1Details) (cands, outdated []port.Candidate) {
	v, req, conf := c.day, c.req, c.conf
	q := port.Query{Question: c.q.text, Language: req.Language, TopK: l1Pool(req.TopK),
		Terms: c.q.terms, TermWeights: c.q.weights, Actor: req.Actor, CorrelationID: req.CorrelationID,
		AsOf: v.day}
	switch {
	case conf.on():
		// Confined to the confirmed procedure: its category is the platform's filter, and only
		// its candidates are kept; there is nothing to retry without the filter.
		category := conf.category // its own variable: conf, a parameter, stays on the stack
		l1.CategoryFilter, q.Category, q.Procedure = &category, conf.category, conf.id
	case len(hints.Domains) == 1:
		l1.CategoryFilter = &hints.Domains[0]
		q.Category = hints.Domains[0]
	}
	q.Buffer = c.sc.lend()
	cands, err := s.retrieve(ctx, q, l1)
	c.sc.keep(cands)
	cands, outdated = v.partition(req.Language, cands, outdated[:0])
	cands, outdated = conf.candidates(cands), conf.candidates(outdated)
	if err == nil && !conf.on() && q.Category != "" && (s.weakL1(c.l, c.q, cands) ||
		s.provider.Semantic() && outsideFilter(c.l, c.lexicalHits(), q.Category)) {
		// The filter narrows, never hides: a filtered call that found nothing convincing, or
		// that kept the procedure the lexical search ranks first out, is followed by one
		// unfiltered call, whose candidates replace the filtered ones.
		q.Category = ""
		s.unfilteredRetry(l1)
		q.Buffer = c.sc.lend() // the filtered candidates are read no more
		cands, err = s.retrieve(ctx, q, l1)
		c.sc.keep(cands)
		cands, outdated = v.partition(req.Language, cands, outdated[:0])
	}
	switch {
	case errors.Is(err, port.ErrUnavailable):
		l1.Status, l1.ErrorClass = lookup.L1Unavailable, port.ErrorClass(err)
	case err != nil:
		l1.Status, l1.ErrorClass = lookup.L1Failed, port.ErrorClass(err)
	case len(cands) == 0:
		l1.Status = lookup.L1Empty
	default:
		l1.Status = lookup.L1OK
	}
	if err != nil {
		cands, outdated = nil, nil
		s.log.WarnContext(ctx, "l1 retrieval failed", "correlation_id", req.CorrelationID,
			"provider", s.provider.Name(), "error_class", l1.ErrorClass, "error", port.SafeError(err))
	}
	l1.CandidateCount, l1.OutdatedCount = len(cands), len(outdated)
	return cands, outdated
}

// retrieve makes one L1 call under the provider deadline and counts it.
func (s *Service) retrieve(ctx context.Context, q port.Query, l1 *lookup.L1Details) ([]port.Candidate, error) {
	ctx, end := span.Start(ctx, "l1")
	defer end()
	pctx, cancel := s.providerContext(ctx)
	defer cancel()
	l1.Calls++
	return s.provider.Retrieve(pctx, q)
}

// weakL1 reports whether filtered L1 candidates are too weak to stand alone: none at all, a
// semantic best score below the kind's filter trust (see ScoreScale.filterTrusted), or, for a
// lexical kind, a best candidate holding fewer than two of the question's informative words.
func (s *Service) weakL1(l *lexical.Lang, question *question, cands []port.Candidate) bool {
	if len(cands) == 0 {
		return true
	}
	best := cands[0]
	for _, c := range cands[1:] {
		if c.Score > best.Score {
			best = c
		}
	}
	if sc, ok := s.scaleOf(s.provider.ScoreKind()); ok && s.provider.Semantic() && sc.Grounded > 0 {
		return best.Score < sc.filterTrusted()
	}
	sp := support(l, question, lookup.EvidenceBlock{DocumentID: best.DocumentID, Source: best.Source, Title: best.Title,
		Section: best.Section, Content: best.Content})
	return sp.Matched < minInformativeWords
}

// unfilteredRetry records in l1, and counts, the unfiltered call that follows a filtered one.
func (s *Service) unfilteredRetry(l1 *lookup.L1Details) {
	l1.UnfilteredRetry = true
	if s.opts.Metrics != nil {
		s.opts.Metrics.Count("L1UnfilteredRetries", 1)
	}
}

// InProcess is implemented by a provider whose calls run in the caller's goroutine without I/O
// and read their context only on entry (the demo's BM25): a deadline cannot cut such a call
// short, and its timer and context cost four of a lookup's allocations. InProcess returns the
// provider itself: a type that embeds such a provider and replaces its calls (a test's
// provider that blocks) inherits the method but is not what it returns, and keeps its deadline.
type InProcess interface {
	InProcess() any
}

// providerContext bounds one provider call.
func (s *Service) providerContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if p, ok := s.provider.(InProcess); ok && p.InProcess() == any(s.provider) {
		return ctx, func() {}
	}
	if s.opts.ProviderTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.opts.ProviderTimeout)
}

func layerOf(l0, l1 bool) lookup.Layer {
	switch {
	case l0 && l1:
		return lookup.LayerBoth
	case l0:
		return lookup.LayerL0
	case l1:
		return lookup.LayerL1
	}
	return lookup.LayerNone
}

func evidenceState(r lookup.Relevance, blocks int, l1Status lookup.L1Status) port.EvidenceState {
	switch {
	case blocks == 0 && (l1Status == lookup.L1Failed || l1Status == lookup.L1Unavailable):
		return port.StateUnavailable
	case r.Assessment == lookup.AssessmentStrong:
		return port.StateGrounded
	}
	return port.StateInsufficient
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// l1Pool is how many candidates L1 is asked for: twice the blocks wanted, at least 10, so that
// fusion and de-duplication choose from the same pool whatever top_k is.
func l1Pool(topK int) int { return min(max(2*topK, 10), maxL1Pool) }

// maxL1Pool is the most candidates a lookup asks L1 for.
const maxL1Pool = 40

// outsideFilter reports whether the lexical search's best section (hits, best first) lies outside
// category, a semantic call's filter: the filtered call never scored that procedure, and no
// semantic margin over it can be read from it (docs/retrieval.md, "Evidence state", rule 4). The
// demo provider's candidates are that search itself, filtered; its lexical path runs its own.
func outsideFilter(l *lexical.Lang, hits []lexical.Hit, category string) bool {
	if len(hits) == 0 {
		return false
	}
	d, _ := l.Doc(hits[0].Passage)
	return d.Category != category
}
