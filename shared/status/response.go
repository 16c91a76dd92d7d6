package status

import (
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// newVerification maps the cached record to the response: its result, without the corpus
// fingerprint, and where it came from.
func newVerification(v store.Verification, cache domain.Cache) domain.Verification {
	return domain.Verification{VerificationResult: v.VerificationResult, Cache: cache}
}
