// Package store keeps the service's records: invocation traces, the verification cache and sync
// reports. Dynamo keeps them in one DynamoDB table; Memory keeps them in process with the same
// semantics (conditional writes, expiry checked on every read) for the embedded default and unit
// tests. One conformance suite (storetest) runs against both.
package store

import (
	"context"
	"errors"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
)

// ErrInvalid is returned for a record that cannot be stored as given.
var ErrInvalid = errors.New("invalid record")

// VerificationTTL is how long a verification result is valid (five minutes, docs/operations.md).
const VerificationTTL = 300 * time.Second

// Verification is a verification as the cache keeps it: the result, and the corpus it is about.
type Verification struct {
	domain.VerificationResult
	// CorpusFingerprint names the managed sources it checked (their ids and versions), so that
	// a result about another corpus (before a deploy) is never read as this one's.
	CorpusFingerprint string
}

// CachedVerification is a verification read back from the cache.
type CachedVerification struct {
	Verification
	StoredAt  time.Time
	ExpiresAt time.Time
}

// Age is how old the cached result is at now.
func (c CachedVerification) Age(now time.Time) time.Duration { return now.Sub(c.StoredAt) }

func checkReport(r domain.SyncReport) error {
	switch {
	case !domain.ValidRunID(r.RunID):
		return errors.Join(ErrInvalid, errors.New("run_id"))
	case r.Language == "":
		return errors.Join(ErrInvalid, errors.New("language"))
	case r.Synced < 0 || r.Failed < 0:
		return errors.Join(ErrInvalid, errors.New("counts"))
	case r.FinishedAt.IsZero():
		return errors.Join(ErrInvalid, errors.New("finished_at"))
	}
	return nil
}

// sameResult reports whether two reports of one run and language carry the same result.
func sameResult(a, b domain.SyncReport) bool {
	return a.Synced == b.Synced && a.Failed == b.Failed && a.FinishedAt.Equal(b.FinishedAt)
}

// newer reports whether report a wins over report b as the latest of a language: the later
// finished_at, and on a tie the greater run_id, so that the winner does not depend on arrival order.
func newer(a, b domain.SyncReport) bool {
	if !a.FinishedAt.Equal(b.FinishedAt) {
		return a.FinishedAt.After(b.FinishedAt)
	}
	return a.RunID > b.RunID
}

// Records is everything a store keeps; Memory and Dynamo implement it.
type Records interface {
	// PutTrace stores a trace; GetTrace reads one back, domain.ErrNotFound when it is absent or
	// expired. They are the retrieval service's TraceStore (wire checks it at compile time).
	PutTrace(ctx context.Context, t lookup.Trace) error
	GetTrace(ctx context.Context, invocationID string) (lookup.Trace, error)
	// PutTraceIfAbsent stores a trace unless its invocation id is stored already (an expired
	// trace included, until it is dropped) and reports whether this call stored it: a replay
	// stores each logged trace once.
	PutTraceIfAbsent(ctx context.Context, t lookup.Trace) (stored bool, err error)
	PutVerification(ctx context.Context, ns domain.Namespace, lang string, v Verification) error
	GetVerification(ctx context.Context, ns domain.Namespace, lang string) (CachedVerification, error)
	PutSyncReport(ctx context.Context, ns domain.Namespace, r domain.SyncReport) (domain.ReportResult, error)
	LatestSyncReport(ctx context.Context, ns domain.Namespace, lang string) (domain.SyncReport, error)
	SyncReports(ctx context.Context, ns domain.Namespace) ([]domain.SyncReport, error)
	// AcquireLease takes the named lease for owner until ttl has passed, unless another owner
	// holds an unexpired one; it reports whether owner holds it now. It keeps processes from
	// doing the same expensive work at once.
	AcquireLease(ctx context.Context, name, owner string, ttl time.Duration) (bool, error)
	// ReleaseLease gives the lease up if owner still holds it.
	ReleaseLease(ctx context.Context, name, owner string) error
}
