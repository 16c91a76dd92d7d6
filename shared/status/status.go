// Package status answers GET /status: three measurements kept apart. The source count
// comes from the corpus, the reported counts from the newest sync report, and document_count only
// from exact verification of every managed source through the provider, run concurrently under a
// bound and a budget, cached for five minutes, and never labelled verified when it is partial.
package status

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// Statistics states of the API contract (docs/openapi.yaml).
const (
	StateVerified    = "verified"
	StateUnavailable = "unavailable"
)

// Records is what the status needs from the store.
type Records interface {
	GetVerification(ctx context.Context, ns domain.Namespace, lang string) (store.CachedVerification, error)
	PutVerification(ctx context.Context, ns domain.Namespace, lang string, v store.Verification) error
	LatestSyncReport(ctx context.Context, ns domain.Namespace, lang string) (domain.SyncReport, error)
	AcquireLease(ctx context.Context, name, owner string, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, name, owner string) error
}

// Metrics counts events; obs.EMF implements it.
type Metrics interface {
	Count(name string, n int)
}

// Options tune the service.
type Options struct {
	Namespace domain.Namespace
	// Concurrency bounds parallel identity lookups (VERIFY_CONCURRENCY).
	Concurrency int
	// RequestTimeout bounds one identity lookup (RAGCORE_TIMEOUT_MS).
	RequestTimeout time.Duration
	// Budget bounds one whole verification (VERIFY_BUDGET_MS). In Lambda it is further cut to the
	// invocation's deadline less DeadlineMargin, so that a slow RAGcore never times the
	// function out: the answer is then "unavailable", on time.
	Budget time.Duration
	// Poll is how often a process waiting for another's verification reads the cache (100 ms).
	Poll time.Duration
	// Metrics receives VerificationCacheHits/Misses; nil records nothing.
	Metrics Metrics
	// Now is the clock (the store's, in tests); nil means the wall clock. TimeZone is the zone
	// in which a version's effective date begins (nil: UTC): the sources are the versions in
	// force today there.
	Now      func() time.Time
	TimeZone *time.Location
	// Sidecar is the comparison path's state for GET /health (zero: disabled).
	Sidecar domain.SidecarHealth
	// StoreProbeTimeout bounds one probe of the store for GET /health (default 500 ms);
	// StoreProbeTTL is how long its result is reused (default 5 s).
	StoreProbeTimeout, StoreProbeTTL time.Duration
	// ProviderProbeTTL is how long the provider's health result is reused for GET /health
	// (default 5 s).
	ProviderProbeTTL time.Duration
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
	provider port.HealthChecker
	verifier port.Verifier
	records  Records
	opts     Options
	log      *slog.Logger
	now      func() time.Time
	owner    string // this process's lease owner id
	flight   singleflight.Group
	// storeProbe and providerProbe are the last checks of the store and the provider, for
	// GET /health.
	storeProbe, providerProbe probeCache

	negMu    sync.Mutex
	negative map[string]failedVerification // by language: the last verification that did not complete
}

// New builds the status service over a provider that can verify its sources.
func New(corpus *knowledge.Corpus, provider port.HealthChecker, verifier port.Verifier, records Records,
	opts Options, log *slog.Logger) *Service {
	if opts.Concurrency <= 0 {
		opts.Concurrency = config.DefaultVerifyConcurrency
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = config.DefaultRAGcoreTimeout
	}
	if opts.Budget <= 0 {
		opts.Budget = config.DefaultVerifyBudget
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
	if opts.ProviderProbeTTL <= 0 {
		opts.ProviderProbeTTL = DefaultProviderProbeTTL
	}
	if opts.TimeZone == nil {
		opts.TimeZone = time.UTC
	}
	return &Service{corpus: corpus, provider: provider, verifier: verifier, records: records, opts: opts, log: log,
		now: opts.Now, owner: "status-" + strings.ToLower(rand.Text()),
		negative: map[string]failedVerification{}}
}

// Status reports the three measurements for one language.
func (s *Service) Status(ctx context.Context, lang string, call port.Call) (domain.Status, error) {
	if !slices.Contains(knowledge.Languages, lang) {
		return domain.Status{}, domain.ErrUnsupportedLanguage
	}
	docs := s.sources(lang)
	st := domain.Status{
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
	case errors.Is(err, domain.ErrNotFound):
	default:
		st.SyncReportState = "unavailable"
		s.log.WarnContext(ctx, "sync report could not be read", "correlation_id", call.CorrelationID,
			"language", lang, "error", port.SafeError(err))
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

// Current is the verification /status would show now: the cached result when there is one for
// the corpus in force, else a verification made now (and cached when complete).
func (s *Service) Current(ctx context.Context, lang string, call port.Call) (store.Verification, error) {
	if !slices.Contains(knowledge.Languages, lang) {
		return store.Verification{}, domain.ErrUnsupportedLanguage
	}
	v, _ := s.verification(ctx, lang, call, false)
	return v, nil
}

// Refresh verifies a language now, whatever the cache holds, and caches a complete result: the
// scheduled event calls it so that GET /status is normally a cache hit, and a sync that uploaded
// a version calls it so that /status right after shows RAGcore's truth, never a stale entry.
func (s *Service) Refresh(ctx context.Context, lang string, call port.Call) (store.Verification, error) {
	if !slices.Contains(knowledge.Languages, lang) {
		return store.Verification{}, domain.ErrUnsupportedLanguage
	}
	v, _ := s.verification(ctx, lang, call, true)
	return v, nil
}

// Health is the provider's health within the provider's request timeout.
func (s *Service) Health(ctx context.Context, call port.Call) port.Health {
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	return s.provider.Health(ctx, call)
}

// SidecarHealth is the sidecar's state for GET /health.
func (s *Service) SidecarHealth() domain.SidecarHealth {
	if s.opts.Sidecar.Status == "" {
		return domain.SidecarHealth{Status: domain.SidecarDisabled}
	}
	return s.opts.Sidecar
}

// ProviderName is the active provider's name.
func (s *Service) ProviderName() string { return s.provider.Name() }

// sources are a language's managed sources: the version in force today of each procedure, so
// that a procedure whose versions all lie ahead counts nowhere.
func (s *Service) sources(lang string) []*knowledge.Document {
	return s.corpus.On(knowledge.Today(s.now(), s.opts.TimeZone)).Documents(lang)
}

func (s *Service) count(name string) {
	if s.opts.Metrics != nil {
		s.opts.Metrics.Count(name, 1)
	}
}
