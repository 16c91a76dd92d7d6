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
	"slices"
	"strings"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/span"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// Reports is what the service needs from the store.
type Reports interface {
	PutSyncReport(ctx context.Context, ns domain.Namespace, r domain.SyncReport) (domain.ReportResult, error)
}

// Verifications is what the syncs need from the status service: the verification /status shows
// now (Current, cached or made now), and a language verified now with a complete result cached
// (Refresh).
type Verifications interface {
	Current(ctx context.Context, lang string, call port.Call) (store.Verification, error)
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
	loc      *time.Location
	budget   time.Duration
}

// New builds the service.
func New(corpus *knowledge.Corpus, provider port.ManifestSyncer, reports Reports, st Verifications,
	ns domain.Namespace, log *slog.Logger) *Service {
	return &Service{corpus: corpus, provider: provider, reports: reports, status: st, ns: ns, log: log, now: time.Now,
		loc: time.UTC, budget: HTTPBudget}
}

// WithClock sets the clock and the zone in which a version's effective date begins
// (KNOWLEDGE_TIME_ZONE): the manifest is the versions in force today there.
func (s *Service) WithClock(now func() time.Time, loc *time.Location) *Service {
	s.now, s.loc = now, loc
	return s
}

// today is the corpus as it stands today: the versions in force.
func (s *Service) today() *knowledge.Corpus { return s.corpus.On(knowledge.Today(s.now(), s.loc)) }

// ref is the manifest entry of a procedure version.
func ref(d *knowledge.Document) port.DocumentRef {
	return port.DocumentRef{DocumentID: d.ID, Language: d.Language, Title: d.Title, Version: d.Version,
		EffectiveDate: d.EffectiveDate, Category: d.Category, SHA256: d.SHA256, Content: d.Raw}
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
	ctx, end := span.Start(ctx, "sync")
	defer end()
	span.Annotate(ctx, span.Annotations{Provider: s.provider.Name(), Language: language})
	ctx, cancel := context.WithTimeout(ctx, s.budget)
	defer cancel()
	langs := []string{language}
	if language == "all" {
		langs = knowledge.Languages
	} else if !slices.Contains(knowledge.Languages, language) {
		return domain.Run{}, domain.ErrUnsupportedLanguage
	}
	// The manifest is the version in force of each procedure: a version written ahead is
	// published on its day (see Refresh), never before.
	corpus := s.today()
	run := domain.Run{RunID: "sync-" + s.now().UTC().Format("20060102T150405Z") + "-" + strings.ToLower(rand.Text()[:8])}
	for _, lang := range langs {
		docs := corpus.Documents(lang)
		refs := make([]port.DocumentRef, 0, len(docs))
		for _, d := range docs {
			refs = append(refs, ref(d))
		}
		// What the provider served before, to name what the sync switched: the verification
		// /status shows (normally the scheduled run's cached one).
		var before *store.Verification
		if _, verifies := s.provider.(port.Verifier); verifies && s.status != nil {
			if v, err := s.status.Current(ctx, lang, call); err == nil {
				before = &v
			}
		}
		res, err := s.provider.SyncManifest(ctx, call, refs)
		if err != nil {
			return domain.Run{}, fmt.Errorf("sync %s: %w", lang, err)
		}
		if res.Failed == nil {
			res.Failed = []domain.SyncFailure{}
		}
		switched := switchedOf(corpus, lang, res.UploadedIDs, before)
		run.Results = append(run.Results, domain.LanguageResult{Language: lang, Documents: res.Documents, Uploaded: res.Uploaded,
			Unchanged: res.Unchanged, Failed: res.Failed, Switched: switched, Note: res.Note})
		s.log.InfoContext(ctx, "manifest synced", "correlation_id", call.CorrelationID, "run_id", run.RunID,
			"language", lang, "provider", s.provider.Name(), "documents", res.Documents, "uploaded", res.Uploaded,
			"unchanged", res.Unchanged, "failed", len(res.Failed), "switched", switched)
		if res.Uploaded > 0 && s.status != nil {
			// The cached verification no longer says what RAGcore holds: verify what was
			// uploaded now, so that /status right after shows it confirmed once published, or
			// outdated with "uploaded" while RAGcore processes it, never the stale entry.
			if _, err := s.status.Refresh(ctx, lang, call); err != nil {
				s.log.WarnContext(ctx, "verification not refreshed after the sync", "correlation_id", call.CorrelationID,
					"language", lang, "error", port.SafeError(err))
			}
		}
	}
	return run, nil
}

// switchedOf names the documents a sync uploaded: each one's version in force (to) and the
// version the provider served before as the verification before the sync found it (from: its
// active version when it was outdated, "" when it was missing or unknown, the same version when
// it was confirmed current and uploaded again).
func switchedOf(corpus *knowledge.Corpus, lang string, ids []string, before *store.Verification) []domain.SwitchedDocument {
	out := make([]domain.SwitchedDocument, 0, len(ids))
	for _, id := range ids {
		d := corpus.Document(lang, id)
		if d == nil {
			continue
		}
		sw := domain.SwitchedDocument{DocumentID: id, To: d.Version}
		if before != nil {
			i := slices.IndexFunc(before.Outdated, func(o domain.OutdatedSource) bool { return o.DocumentID == id })
			switch {
			case i >= 0:
				sw.From = before.Outdated[i].Active
			case !slices.Contains(before.Missing, id) && !slices.ContainsFunc(before.Failed,
				func(f domain.SourceOutcome) bool { return f.DocumentID == id }):
				sw.From = d.Version
			}
		}
		out = append(out, sw)
	}
	return out
}

// Report stores a sync report: once per (run_id, language), and as the newest of its language
// only when no newer one is stored.
func (s *Service) Report(ctx context.Context, call port.Call, in domain.SyncReport) (domain.ReportResult, error) {
	if !slices.Contains(knowledge.Languages, in.Language) {
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
	// Switched are the documents whose version in force the run published because the
	// provider served another (a version that took effect, or a withdrawn one); SwitchFailed
	// those whose upload failed, to be tried again by the next run.
	Switched     []Switched           `json:"switched"`
	SwitchFailed []domain.SyncFailure `json:"switch_failed,omitempty"`
	// Outdated is how many sources the provider still serves in another version after the run.
	Outdated int `json:"outdated"`
}

// Switched is a document the scheduled run switched to its version in force.
type Switched struct {
	DocumentID    string `json:"document_id"`
	Version       string `json:"version"`
	EffectiveDate string `json:"effective_date"`
	// From is the version the provider served before; "" when it held none.
	From string `json:"from"`
}

// Refresh verifies every language now and caches the complete results, one language after the
// other so that the concurrency bound holds for the whole run. A source the provider serves in
// another version than the one in force (verification.outdated) is uploaded in its version in
// force, so that a version is published on the day it takes effect (a procedure's first version
// too, when RAGcore holds none of it: takingEffect); the language is then
// verified again. A source already current is never uploaded: a run that finds nothing to
// switch sends nothing, and a second run on the same day switches nothing again.
func (s *Service) Refresh(ctx context.Context, call port.Call) []RefreshResult {
	out := make([]RefreshResult, 0, len(knowledge.Languages))
	corpus := s.today()
	for _, lang := range knowledge.Languages {
		v, err := s.status.Refresh(ctx, lang, call)
		if err != nil {
			s.log.ErrorContext(ctx, "refresh failed", "language", lang, "error", port.SafeError(err))
			continue
		}
		res := RefreshResult{Language: lang, Switched: []Switched{}}
		if due := slices.Concat(v.Outdated, takingEffect(corpus, lang, v.VerificationResult)); len(due) > 0 {
			s.switchVersions(ctx, call, corpus, lang, due, &res)
			if len(res.Switched) > 0 {
				if again, err := s.status.Refresh(ctx, lang, call); err == nil {
					v = again
				}
			}
		}
		res.Checked, res.Confirmed, res.Errors, res.Complete, res.Outdated = v.Checked, v.Confirmed, v.Errors, v.Complete, len(v.Outdated)
		out = append(out, res)
	}
	return out
}

// takingEffect are the sources RAGcore does not hold whose version in force took effect today or
// yesterday (a run just before midnight may have missed it): a procedure published for the first
// time on its day. A source missing for longer is the sync workflow's to upload (POST /sync), not
// the schedule's, which only publishes versions on their day.
func takingEffect(corpus *knowledge.Corpus, lang string, v domain.VerificationResult) []domain.OutdatedSource {
	var out []domain.OutdatedSource
	day := corpus.Day()
	for _, n := range v.NotIndexed {
		d := corpus.Document(lang, n.DocumentID)
		if n.Reason != "missing" || d == nil || (d.EffectiveDate != day && d.EffectiveDate != knowledge.AddDays(day, -1)) {
			continue
		}
		out = append(out, domain.OutdatedSource{DocumentID: d.ID, InForce: d.Version})
	}
	return out
}

// switchVersions uploads the version in force of each outdated source, one upload per
// document so that the report names each one switched.
func (s *Service) switchVersions(ctx context.Context, call port.Call, corpus *knowledge.Corpus, lang string,
	outdated []domain.OutdatedSource, res *RefreshResult) {
	for _, o := range outdated {
		d := corpus.Document(lang, o.DocumentID)
		if d == nil || d.Version != o.InForce {
			continue // the day turned during the run: the next run sees it
		}
		r, err := s.provider.SyncManifest(ctx, call, []port.DocumentRef{ref(d)})
		switch {
		case err != nil:
			res.SwitchFailed = append(res.SwitchFailed, domain.SyncFailure{DocumentID: d.ID, Reason: port.ErrorClass(err)})
		case len(r.Failed) > 0:
			res.SwitchFailed = append(res.SwitchFailed, r.Failed...)
		case r.Uploaded > 0:
			res.Switched = append(res.Switched, Switched{DocumentID: d.ID, Version: d.Version, EffectiveDate: d.EffectiveDate,
				From: o.Active})
		}
	}
	if len(res.Switched) > 0 || len(res.SwitchFailed) > 0 {
		s.log.InfoContext(ctx, "versions switched", "correlation_id", call.CorrelationID, "language", lang,
			"provider", s.provider.Name(), "switched", res.Switched, "failed", res.SwitchFailed)
	}
}
