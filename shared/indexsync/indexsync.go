// Package indexsync is the sync function's domain: the manifest sync that sends the
// authoritative procedures to the active provider, the intake of the central sync workflow's
// reports (idempotent per run_id, newest wins) and the scheduled refresh of the verification
// cache of every language.
package indexsync

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// Reports is what the service needs from the store.
type Reports interface {
	PutSyncReport(ctx context.Context, ns domain.Namespace, r domain.SyncReport) (domain.ReportResult, error)
}

// Verifications is what the scheduled refresh needs from the status service: verify a language
// now and cache a complete result.
type Verifications interface {
	Refresh(ctx context.Context, lang string, call port.Call) (store.Verification, error)
}

// Service runs manifest syncs, takes sync reports and refreshes verifications.
type Service struct {
	corpus   *knowledge.Corpus
	provider port.ManifestSyncer
	reports  Reports
	status   Verifications
	ns       domain.Namespace
	log      *slog.Logger
	now      func() time.Time
	budget   time.Duration
}

// New builds the service.
func New(corpus *knowledge.Corpus, provider port.ManifestSyncer, reports Reports, st Verifications,
	ns domain.Namespace, log *slog.Logger) *Service {
	return &Service{corpus: corpus, provider: provider, reports: reports, status: st, ns: ns, log: log, now: time.Now,
		budget: HTTPBudget}
}

// WithBudget replaces HTTPBudget (tests).
func (s *Service) WithBudget(d time.Duration) *Service {
	s.budget = d
	return s
}

// HTTPBudget bounds a manifest sync made through the API: API Gateway ends an HTTP API
// integration after 30 s, and an answer cut off there would carry neither the per-document
// results nor a correlation id. Uploads still running when it ends are reported as failed
// ("timeout"); RAGcore answers "unchanged" for them next time if they landed.
const HTTPBudget = 25 * time.Second

// Sync sends the manifest of one language, or of all ("all"), to the provider, within
// HTTPBudget (or the caller's earlier deadline).
func (s *Service) Sync(ctx context.Context, call port.Call, language string) (domain.Run, error) {
	ctx, cancel := context.WithTimeout(ctx, s.budget)
	defer cancel()
	langs := []string{language}
	if language == "all" {
		langs = knowledge.Languages
	} else if s.corpus.Documents(language) == nil {
		return domain.Run{}, domain.ErrUnsupportedLanguage
	}
	run := domain.Run{RunID: "sync-" + s.now().UTC().Format("20060102T150405Z") + "-" + strings.ToLower(rand.Text()[:8])}
	for _, lang := range langs {
		docs := s.corpus.Documents(lang)
		refs := make([]port.DocumentRef, 0, len(docs))
		for _, d := range docs {
			refs = append(refs, port.DocumentRef{DocumentID: d.ID, Language: lang, Title: d.Title, Version: d.Version,
				EffectiveDate: d.EffectiveDate, Category: d.Category, SHA256: d.SHA256, Content: d.Raw})
		}
		res, err := s.provider.SyncManifest(ctx, call, refs)
		if err != nil {
			return domain.Run{}, fmt.Errorf("sync %s: %w", lang, err)
		}
		if res.Failed == nil {
			res.Failed = []domain.SyncFailure{}
		}
		run.Results = append(run.Results, domain.LanguageResult{Language: lang, Documents: res.Documents, Uploaded: res.Uploaded,
			Unchanged: res.Unchanged, Failed: res.Failed, Note: res.Note})
		s.log.InfoContext(ctx, "manifest synced", "correlation_id", call.CorrelationID, "run_id", run.RunID,
			"language", lang, "provider", s.provider.Name(), "documents", res.Documents, "uploaded", res.Uploaded,
			"unchanged", res.Unchanged, "failed", len(res.Failed))
	}
	return run, nil
}

// Report stores a sync report: once per (run_id, language), and as the newest of its language
// only when no newer one is stored.
func (s *Service) Report(ctx context.Context, call port.Call, in domain.SyncReport) (domain.ReportResult, error) {
	if s.corpus.Documents(in.Language) == nil {
		return domain.ReportResult{}, domain.ErrUnsupportedLanguage
	}
	r := in
	r.ReceivedAt = s.now().UTC()
	res, err := s.reports.PutSyncReport(ctx, s.ns, r)
	if errors.Is(err, store.ErrInvalid) {
		return res, fmt.Errorf("%w: %v", domain.ErrInvalidReport, err)
	}
	if err != nil {
		return res, err
	}
	level := slog.LevelInfo
	if res.Differs {
		// A run_id reused for another result: the first stays; the second is only in this log.
		level = slog.LevelWarn
	}
	s.log.Log(ctx, level, "sync report", "correlation_id", call.CorrelationID, "actor_id", call.Actor.ID,
		"run_id", r.RunID, "language", r.Language, "synced", r.Synced, "failed", r.Failed,
		"finished_at", r.FinishedAt, "duplicate", res.Duplicate, "differs", res.Differs, "latest", res.Latest)
	return res, nil
}

// RefreshResult is the scheduled refresh of one language.
type RefreshResult struct {
	Language  string `json:"language"`
	Checked   int    `json:"checked"`
	Confirmed int    `json:"confirmed"`
	Errors    int    `json:"errors"`
	Complete  bool   `json:"complete"`
}

// Refresh verifies every language now and caches the complete results, one language after the
// other so that the concurrency bound holds for the whole run.
func (s *Service) Refresh(ctx context.Context, call port.Call) []RefreshResult {
	out := make([]RefreshResult, 0, len(knowledge.Languages))
	for _, lang := range knowledge.Languages {
		v, err := s.status.Refresh(ctx, lang, call)
		if err != nil {
			s.log.ErrorContext(ctx, "refresh failed", "language", lang, "error", port.SafeError(err))
			continue
		}
		out = append(out, RefreshResult{Language: lang, Checked: v.Checked, Confirmed: v.Confirmed, Errors: v.Errors,
			Complete: v.Complete})
	}
	return out
}
