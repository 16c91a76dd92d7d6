package status

import (
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// newVerification maps the cached record to the response.
func newVerification(v store.Verification, cache domain.Cache) domain.Verification {
	return domain.Verification{Checked: v.Checked, Confirmed: v.Confirmed, Missing: v.Missing, Errors: v.Errors,
		VerifiedAt: v.VerifiedAt, Complete: v.Complete, NotIndexed: outcomes(v.NotIndexed),
		Failed: outcomes(v.Failed), DurationMs: v.DurationMs, Cache: cache}
}

// outcomes maps the record's outcomes; nil stays nil, so that the JSON is as it was.
func outcomes(in []store.SourceOutcome) []domain.SourceOutcome {
	if in == nil {
		return nil
	}
	out := make([]domain.SourceOutcome, len(in))
	for i, o := range in {
		out[i] = domain.SourceOutcome(o)
	}
	return out
}
