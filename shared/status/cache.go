package status

// The verification cache: the record in the store (about this corpus, for VerificationTTL) and
// the negative cache of verifications that did not complete.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// failedVerification is an entry of the negative cache.
type failedVerification struct {
	v  store.Verification
	at time.Time
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
	return c.CorpusFingerprint == fingerprint(s.sources(lang))
}

// verification returns the cached result when there is one (and force is false), else one
// verification shared by every concurrent caller in this process (single-flight) and, through a
// lease in the store, by other processes: a process that finds the lease taken waits for the
// holder's result to appear in the cache instead of asking RAGcore again.
func (s *Service) verification(ctx context.Context, lang string, call port.Call, force bool) (store.Verification, domain.Cache) {
	ttl := int(store.VerificationTTL / time.Second)
	if !force {
		c, err := s.records.GetVerification(ctx, s.opts.Namespace, lang)
		if err == nil && !s.current(lang, c) {
			err = domain.ErrNotFound // about another corpus: as good as absent
		}
		if err == nil {
			s.count("VerificationCacheHits")
			return normalise(c.Verification), domain.Cache{Hit: true, AgeSeconds: int(c.Age(s.now()) / time.Second), TTLSeconds: ttl}
		}
		if !errors.Is(err, domain.ErrNotFound) {
			s.log.WarnContext(ctx, "verification cache could not be read; verifying", "correlation_id",
				call.CorrelationID, "language", lang, "error", port.SafeError(err))
		}
		if f, ok := s.failed(lang); ok {
			s.count("VerificationNegativeCacheHits")
			return normalise(f.v), domain.Cache{Hit: true, Negative: true, AgeSeconds: int(s.now().Sub(f.at) / time.Second),
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
		return normalise(out.v), domain.Cache{Hit: out.hit, AgeSeconds: out.age, TTLSeconds: ttl}
	case <-ctx.Done():
		// The caller went away; the shared verification goes on for the others.
		docs := s.sources(lang)
		v := store.Verification{VerificationResult: domain.VerificationResult{Checked: len(docs), VerifiedAt: s.now().UTC()}}
		for _, d := range docs {
			v.Errors++
			v.Failed = append(v.Failed, domain.SourceOutcome{DocumentID: d.ID, Reason: port.ErrorClass(ctx.Err())})
		}
		return normalise(v), domain.Cache{TTLSeconds: ttl}
	}
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

// normalise gives every list a value, so that JSON says [] rather than null.
func normalise(v store.Verification) store.Verification {
	if v.Missing == nil {
		v.Missing = []string{}
	}
	if v.NotIndexed == nil {
		v.NotIndexed = []domain.SourceOutcome{}
	}
	if v.Failed == nil {
		v.Failed = []domain.SourceOutcome{}
	}
	if v.Outdated == nil {
		v.Outdated = []domain.OutdatedSource{}
	}
	return v
}
