package status

// One verification at a time: single-flight within the process and a lease in the store
// across processes, under a budget cut to the caller's deadline.

import (
	"context"
	"crypto/rand"
	"strings"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

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

func (s *Service) verifyOnce(ctx context.Context, lang string, call port.Call, budget time.Duration, force bool) shared {
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
			call.CorrelationID, "language", lang, "error", port.SafeError(err))
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
					"error", port.SafeError(rerr))
			}
		}()
	}
	v := s.verify(ctx, lang, call)
	s.remember(lang, v)
	if v.Complete {
		if perr := s.records.PutVerification(context.WithoutCancel(ctx), s.opts.Namespace, lang, v); perr != nil {
			s.log.WarnContext(ctx, "verification not cached", "correlation_id", call.CorrelationID, "language", lang,
				"error", port.SafeError(perr))
		}
	}
	s.log.InfoContext(ctx, "verified", "correlation_id", call.CorrelationID, "language", lang, "forced", force,
		"checked", v.Checked, "confirmed", v.Confirmed, "errors", v.Errors, "complete", v.Complete, "duration_ms", v.DurationMs)
	return shared{v: v}
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
