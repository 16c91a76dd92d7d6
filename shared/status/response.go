package status

import "github.com/northstar-mobility/mobilityops-knowledge/shared/store"

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
