// Package status answers GET /status: seed 004's three measurements kept apart. The source count
// comes from the corpus, the reported counts from the newest sync report, and document_count only
// from exact verification of every managed source through the provider, run concurrently under a
// bound and a budget, cached for five minutes, and never labelled verified when it is partial.
package status

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// Statistics states of api.md.
const (
	StateVerified    = "verified"
	StateUnavailable = "unavailable"
)

// Records is what the status needs from the store.
type Records interface {
	GetVerification(ctx context.Context, ns store.Namespace, lang string) (store.CachedVerification, error)
	PutVerification(ctx context.Context, ns store.Namespace, lang string, v store.Verification) error
	LatestSyncReport(ctx context.Context, ns store.Namespace, lang string) (store.SyncReport, error)
	AcquireLease(ctx context.Context, name, owner string, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, name, owner string) error
}

// Metrics counts events; obs.EMF implements it.
type Metrics interface {
	Count(name string, n int)
}

// Options tune the service.
type Options struct {
	Namespace store.Namespace
	// Concurrency bounds parallel identity lookups (VERIFY_CONCURRENCY, default 16).
	Concurrency int
	// RequestTimeout bounds one identity lookup (RAGCORE_TIMEOUT_MS).
	RequestTimeout time.Duration
	// Budget bounds one whole verification (default 8 s). In Lambda it is further cut to the
	// invocation's deadline less DeadlineMargin, so that a slow RAGcore never times the
	// function out: the answer is then "unavailable", on time.
	Budget time.Duration
	// Poll is how often a process waiting for another's verification reads the cache (100 ms).
	Poll time.Duration
	// Metrics receives VerificationCacheHits/Misses; nil records nothing.
	Metrics Metrics
	// Now is the clock (the store's, in tests); nil means the wall clock.
	Now func() time.Time
	// Sidecar is the comparison path's state for GET /health (zero: disabled).
	Sidecar SidecarHealth
	// StoreProbeTimeout bounds one probe of the store for GET /health (default 500 ms);
	// StoreProbeTTL is how long its result is reused (default 5 s).
	StoreProbeTimeout, StoreProbeTTL time.Duration
	// NegativeTTL is how long this process answers /status with a verification that did not
	// complete before it asks RAGcore again (VERIFY_NEGATIVE_TTL_MS), so that an outage costs one
	// identity lookup per source per TTL rather than per call. Such a result is never written to
	// the store and never counted verified. Zero or less: no negative cache.
	NegativeTTL time.Duration
}

// DeadlineMargin is kept free before an invocation's deadline to answer and write the cache.
const DeadlineMargin = time.Second

// Service answers status requests. It is safe for concurrent use.
type Service struct {
	corpus   *knowledge.Corpus
	provider retrieval.HealthChecker
	verifier retrieval.Verifier
	records  Records
	opts     Options
	log      *slog.Logger
	now      func() time.Time
	owner    string // this process's lease owner id
	flight   singleflight.Group
	prints   map[string]string // corpus fingerprint per language
	probe    storeProbe        // the last probe of the store, for GET /health

	negMu    sync.Mutex
	negative map[string]failedVerification // by language: the last verification that did not complete
}

// failedVerification is an entry of the negative cache.
type failedVerification struct {
	v  store.Verification
	at time.Time
}

// New builds the status service over a provider that can verify its sources.
func New(corpus *knowledge.Corpus, provider retrieval.HealthChecker, verifier retrieval.Verifier, records Records,
	opts Options, log *slog.Logger) *Service {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 16
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 2 * time.Second
	}
	if opts.Budget <= 0 {
		opts.Budget = 8 * time.Second
	}
	if opts.Poll <= 0 {
		opts.Poll = 100 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.StoreProbeTimeout <= 0 {
		opts.StoreProbeTimeout = DefaultStoreProbeTimeout
	}
	if opts.StoreProbeTTL <= 0 {
		opts.StoreProbeTTL = DefaultStoreProbeTTL
	}
	prints := map[string]string{}
	for _, lang := range knowledge.Languages {
		prints[lang] = fingerprint(corpus.Documents(lang))
	}
	return &Service{corpus: corpus, provider: provider, verifier: verifier, records: records, opts: opts, log: log,
		now: opts.Now, owner: "status-" + strings.ToLower(rand.Text()), prints: prints,
		negative: map[string]failedVerification{}}
}

// fingerprint names a language's managed sources: a hash of their ids and versions.
func fingerprint(docs []*knowledge.Document) string {
	h := sha256.New()
	for _, d := range docs { // sorted by id
		fmt.Fprintf(h, "%s@%s\n", d.ID, d.Version)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// current reports whether a cached verification is about this corpus.
func (s *Service) current(lang string, c store.CachedVerification) bool {
	return c.CorpusFingerprint == s.prints[lang]
}

// newVerification maps the cached record to the response.
func newVerification(v store.Verification, cache Cache) Verification {
	return Verification{Checked: v.Checked, Confirmed: v.Confirmed, Missing: v.Missing, Errors: v.Errors,
		VerifiedAt: v.VerifiedAt, Complete: v.Complete, NotIndexed: outcomes(v.NotIndexed),
		Failed: outcomes(v.Failed), DurationMs: v.DurationMs, Cache: cache}
}

// outcomes maps the record's outcomes; nil stays nil, so that the JSON is as it was.
func outcomes(in []store.SourceOutcome) []SourceOutcome {
	if in == nil {
		return nil
	}
	out := make([]SourceOutcome, len(in))
	for i, o := range in {
		out[i] = SourceOutcome(o)
	}
	return out
}

// The bodies of GET /status, named here for the service's callers; they live in domain.
type (
	Status        = domain.Status
	Namespace     = domain.Namespace
	Verification  = domain.Verification
	SourceOutcome = domain.SourceOutcome
	Cache         = domain.Cache
	SidecarHealth = domain.SidecarHealth
)

// Status reports the three measurements for one language.
func (s *Service) Status(ctx context.Context, lang string, call retrieval.Call) (Status, error) {
	docs := s.corpus.Documents(lang)
	if docs == nil {
		return Status{}, retrieval.ErrUnsupportedLanguage
	}
	st := Status{
		Language:            lang,
		Namespace:           s.opts.Namespace,
		Provider:            s.provider.Name(),
		SourceDocumentCount: len(docs),
		SyncReportState:     "none",
	}
	switch r, err := s.records.LatestSyncReport(ctx, s.opts.Namespace, lang); {
	case err == nil:
		st.ReportedSynced, st.ReportedFailed = &r.Synced, &r.Failed
		finished := r.FinishedAt.UTC()
		st.LastSyncAt, st.LastSyncRunID = &finished, &r.RunID
		st.SyncReportState = "received"
	case errors.Is(err, store.ErrNotFound):
	default:
		st.SyncReportState = "unavailable"
		s.log.WarnContext(ctx, "sync report could not be read", "correlation_id", call.CorrelationID,
			"language", lang, "error", retrieval.SafeError(err))
	}
	v, cache := s.verification(ctx, lang, call, false)
	st.Verification = newVerification(v, cache)
	st.StatisticsState = StateUnavailable
	if v.Complete && v.Checked == len(docs) {
		n := v.Confirmed
		st.DocumentCount, st.StatisticsState = &n, StateVerified
	}
	return st, nil
}

// Refresh verifies a language now, whatever the cache holds, and caches a complete result: the
// scheduled event calls it so that GET /status is normally a cache hit.
func (s *Service) Refresh(ctx context.Context, lang string, call retrieval.Call) (store.Verification, error) {
	if s.corpus.Documents(lang) == nil {
		return store.Verification{}, retrieval.ErrUnsupportedLanguage
	}
	v, _ := s.verification(ctx, lang, call, true)
	return v, nil
}

// Health is the provider's health within the provider's request timeout.
func (s *Service) Health(ctx context.Context, call retrieval.Call) retrieval.Health {
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	return s.provider.Health(ctx, call)
}

// SidecarHealth is the sidecar's state for GET /health.
func (s *Service) SidecarHealth() SidecarHealth {
	if s.opts.Sidecar.Status == "" {
		return SidecarHealth{Status: "disabled"}
	}
	return s.opts.Sidecar
}

// ProviderName is the active provider's name.
func (s *Service) ProviderName() string { return s.provider.Name() }

func (s *Service) count(name string) {
	if s.opts.Metrics != nil {
		s.opts.Metrics.Count(name, 1)
	}
}

// verification returns the cached result when there is one (and force is false), else one
// verification shared by every concurrent caller in this process (single-flight) and, through a
// lease in the store, by other processes: a process that finds the lease taken waits for the
// holder's result to appear in the cache instead of asking RAGcore again.
func (s *Service) verification(ctx context.Context, lang string, call retrieval.Call, force bool) (store.Verification, Cache) {
	ttl := int(store.VerificationTTL / time.Second)
	if !force {
		c, err := s.records.GetVerification(ctx, s.opts.Namespace, lang)
		if err == nil && !s.current(lang, c) {
			err = store.ErrNotFound // about another corpus: as good as absent
		}
		if err == nil {
			s.count("VerificationCacheHits")
			return normalise(c.Verification), Cache{Hit: true, AgeSeconds: int(c.Age(s.now()) / time.Second), TTLSeconds: ttl}
		}
		if !errors.Is(err, store.ErrNotFound) {
			s.log.WarnContext(ctx, "verification cache could not be read; verifying", "correlation_id",
				call.CorrelationID, "language", lang, "error", retrieval.SafeError(err))
		}
		if f, ok := s.failed(lang); ok {
			s.count("VerificationNegativeCacheHits")
			return normalise(f.v), Cache{Hit: true, Negative: true, AgeSeconds: int(s.now().Sub(f.at) / time.Second),
				TTLSeconds: int(s.opts.NegativeTTL / time.Second)}
		}
		s.count("VerificationCacheMisses")
	}
	budget := s.budget(ctx)
	key := lang
	if force {
		key += "#refresh"
	}
	// The shared work must not end because the first caller hung up: it has its own budget.
	ch := s.flight.DoChan(key, func() (any, error) {
		return s.verifyOnce(context.WithoutCancel(ctx), lang, call, budget, force), nil
	})
	select {
	case r := <-ch:
		out := r.Val.(shared)
		return normalise(out.v), Cache{Hit: out.hit, AgeSeconds: out.age, TTLSeconds: ttl}
	case <-ctx.Done():
		// The caller went away; the shared verification goes on for the others.
		v := store.Verification{Checked: len(s.corpus.Documents(lang)), VerifiedAt: s.now().UTC()}
		for _, d := range s.corpus.Documents(lang) {
			v.Errors++
			v.Failed = append(v.Failed, store.SourceOutcome{DocumentID: d.ID, Reason: retrieval.ErrorClass(ctx.Err())})
		}
		return normalise(v), Cache{TTLSeconds: ttl}
	}
}

type shared struct {
	v   store.Verification
	hit bool // another process's result, read from the cache
	age int
}

// budget is the time one verification may take: Options.Budget, cut to the caller's deadline
// less DeadlineMargin.
func (s *Service) budget(ctx context.Context) time.Duration {
	b := s.opts.Budget
	if dl, ok := ctx.Deadline(); ok {
		b = min(b, time.Until(dl)-DeadlineMargin)
	}
	return max(b, 100*time.Millisecond)
}

func (s *Service) verifyOnce(ctx context.Context, lang string, call retrieval.Call, budget time.Duration, force bool) shared {
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	lease := "verify#" + s.opts.Namespace.Tenant + "#" + s.opts.Namespace.Workspace + "#" +
		s.opts.Namespace.Collection + "#" + lang
	start := s.now()
	// A result cached by another process while this one waited or took the lease serves too;
	// a forced refresh takes only one made after it started.
	var cutoff time.Time
	if force {
		cutoff = start
	}
	// Each flight has its own owner id, so that two flights of one process (a status and a
	// forced refresh) cannot both hold the lease, nor one release the other's.
	owner := s.owner + "#" + strings.ToLower(rand.Text()[:8])
	held, err := s.records.AcquireLease(ctx, lease, owner, budget+DeadlineMargin)
	if err != nil {
		// Without the store there is no lease; verifying anyway is better than no answer.
		s.log.WarnContext(ctx, "verification lease unavailable; verifying without it", "correlation_id",
			call.CorrelationID, "language", lang, "error", retrieval.SafeError(err))
	}
	for err == nil && !held {
		// Another process verifies this language: wait for its result in the cache. If it
		// gives up (its lease released or expired without a cached result), take over.
		if !sleep(ctx, s.opts.Poll) {
			break
		}
		if c, gerr := s.records.GetVerification(ctx, s.opts.Namespace, lang); gerr == nil && s.current(lang, c) && !c.StoredAt.Before(cutoff) {
			return shared{v: c.Verification, hit: true, age: int(c.Age(s.now()) / time.Second)}
		}
		held, err = s.records.AcquireLease(ctx, lease, owner, budget+DeadlineMargin)
	}
	if held {
		// The previous holder may have cached its result and let go between this process's
		// last look at the cache and its taking the lease: look once more before asking RAGcore.
		if c, gerr := s.records.GetVerification(ctx, s.opts.Namespace, lang); gerr == nil && s.current(lang, c) && !c.StoredAt.Before(cutoff) {
			_ = s.records.ReleaseLease(context.WithoutCancel(ctx), lease, owner)
			return shared{v: c.Verification, hit: true, age: int(c.Age(s.now()) / time.Second)}
		}
		defer func() {
			if rerr := s.records.ReleaseLease(context.WithoutCancel(ctx), lease, owner); rerr != nil {
				s.log.WarnContext(ctx, "verification lease not released; it expires by itself", "language", lang,
					"error", retrieval.SafeError(rerr))
			}
		}()
	}
	v := s.verify(ctx, lang, call)
	s.remember(lang, v)
	if v.Complete {
		if perr := s.records.PutVerification(context.WithoutCancel(ctx), s.opts.Namespace, lang, v); perr != nil {
			s.log.WarnContext(ctx, "verification not cached", "correlation_id", call.CorrelationID, "language", lang,
				"error", retrieval.SafeError(perr))
		}
	}
	s.log.InfoContext(ctx, "verified", "correlation_id", call.CorrelationID, "language", lang, "forced", force,
		"checked", v.Checked, "confirmed", v.Confirmed, "errors", v.Errors, "complete", v.Complete, "duration_ms", v.DurationMs)
	return shared{v: v}
}

// failed returns the negative cache's entry for a language while it is fresh.
func (s *Service) failed(lang string) (failedVerification, bool) {
	if s.opts.NegativeTTL <= 0 {
		return failedVerification{}, false
	}
	s.negMu.Lock()
	defer s.negMu.Unlock()
	f, ok := s.negative[lang]
	if !ok || f.v.Complete || s.now().Sub(f.at) >= s.opts.NegativeTTL {
		return failedVerification{}, false
	}
	return f, true
}

// remember keeps a verification that did not complete in the negative cache, and forgets the
// entry once one completes.
func (s *Service) remember(lang string, v store.Verification) {
	if s.opts.NegativeTTL <= 0 {
		return
	}
	s.negMu.Lock()
	defer s.negMu.Unlock()
	if v.Complete {
		delete(s.negative, lang)
		return
	}
	s.negative[lang] = failedVerification{v: v, at: s.now()}
}

// verify looks up every managed source of a language, at most Concurrency at a time, each under
// RequestTimeout, all under ctx's budget. A source that fails or is not reached in time is an
// error: the result is then incomplete.
func (s *Service) verify(ctx context.Context, lang string, call retrieval.Call) store.Verification {
	start := s.now()
	docs := s.corpus.Documents(lang)
	type result struct {
		outcome string
		err     error
	}
	results := make([]result, len(docs))
	var g errgroup.Group
	g.SetLimit(s.opts.Concurrency)
	for i, d := range docs {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				results[i].err = err
				return nil
			}
			rctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
			defer cancel()
			results[i].outcome, results[i].err = s.verifier.VerifySource(rctx, call, lang, d.ID)
			return nil
		})
	}
	_ = g.Wait() // per-source errors are in results
	v := store.Verification{Checked: len(docs), VerifiedAt: s.now().UTC()}
	for i, r := range results {
		id := docs[i].ID
		switch {
		case r.err != nil:
			v.Errors++
			v.Failed = append(v.Failed, store.SourceOutcome{DocumentID: id, Reason: retrieval.ErrorClass(r.err)})
		case r.outcome == retrieval.SourceIndexed:
			v.Confirmed++
		default:
			v.Missing = append(v.Missing, id)
			v.NotIndexed = append(v.NotIndexed, store.SourceOutcome{DocumentID: id, Reason: r.outcome})
		}
	}
	v.Complete = v.Errors == 0
	v.CorpusFingerprint = s.prints[lang]
	v.DurationMs = math.Round(float64(s.now().Sub(start).Microseconds())/10) / 100
	return normalise(v)
}

// normalise gives every list a value, so that JSON says [] rather than null.
func normalise(v store.Verification) store.Verification {
	if v.Missing == nil {
		v.Missing = []string{}
	}
	if v.NotIndexed == nil {
		v.NotIndexed = []store.SourceOutcome{}
	}
	if v.Failed == nil {
		v.Failed = []store.SourceOutcome{}
	}
	return v
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
