package status

import (
	"context"
	"math"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/span"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
	"golang.org/x/sync/errgroup"
)

// verify looks up every managed source of a language, at most Concurrency at a time, each under
// RequestTimeout, all under ctx's budget. A source that fails or is not reached in time is an
// error: the result is then incomplete.
func (s *Service) verify(ctx context.Context, lang string, call port.Call) store.Verification {
	ctx, end := span.Start(ctx, "verify")
	defer end()
	span.Annotate(ctx, span.Annotations{Provider: s.provider.Name(), Language: lang})
	start := s.now()
	docs := s.sources(lang)
	type result struct {
		outcome, active string
		err             error
	}
	versions, _ := s.verifier.(port.VersionVerifier)
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
			if versions != nil {
				results[i].outcome, results[i].active, results[i].err = versions.VerifySourceVersion(rctx, call, lang, d.ID)
				return nil
			}
			results[i].outcome, results[i].err = s.verifier.VerifySource(rctx, call, lang, d.ID)
			return nil
		})
	}
	_ = g.Wait() // per-source errors are in results
	v := store.Verification{VerificationResult: domain.VerificationResult{Checked: len(docs), VerifiedAt: s.now().UTC()}}
	for i, r := range results {
		id := docs[i].ID
		switch {
		case r.err != nil:
			v.Errors++
			v.Failed = append(v.Failed, domain.SourceOutcome{DocumentID: id, Reason: port.ErrorClass(r.err)})
		case r.outcome == port.SourceIndexed:
			// Indexed counts whichever version is active; one that is not the version in
			// force is listed, never hidden.
			v.Confirmed++
			if r.active != "" && r.active != docs[i].Version {
				v.Outdated = append(v.Outdated, domain.OutdatedSource{DocumentID: id, InForce: docs[i].Version, Active: r.active})
			}
		default:
			v.Missing = append(v.Missing, id)
			v.NotIndexed = append(v.NotIndexed, domain.SourceOutcome{DocumentID: id, Reason: r.outcome})
			if r.outcome == port.SourceNotPublished && r.active == docs[i].Version {
				// The version in force is uploaded and RAGcore still processes it: not counted,
				// and listed as outdated with what RAGcore served before, as far as known.
				v.Outdated = append(v.Outdated, domain.OutdatedSource{DocumentID: id, InForce: docs[i].Version,
					Active: s.previouslyActive(ctx, lang, id, docs[i].Version), Uploaded: r.active})
			}
		}
	}
	v.Complete = v.Errors == 0
	v.CorpusFingerprint = fingerprint(docs)
	v.DurationMs = math.Round(float64(s.now().Sub(start).Microseconds())/10) / 100
	return normalise(v)
}

// previouslyActive is the version RAGcore served of a source before the version in force was
// uploaded, as the cached verification of the language lists it among the outdated sources
// (whatever corpus day it was made on); "" when it lists none. It is read only for a source
// whose upload RAGcore is processing, so a verification reads the cache at most once a source.
func (s *Service) previouslyActive(ctx context.Context, lang, id, inForce string) string {
	c, err := s.records.GetVerification(ctx, s.opts.Namespace, lang)
	if err != nil {
		return ""
	}
	for _, o := range c.Outdated {
		if o.DocumentID == id && o.Active != inForce {
			return o.Active
		}
	}
	return ""
}
