package wire

import "github.com/northstar-mobility/mobilityops-knowledge/shared/port"

// Provider is what the composition holds of the configured knowledge provider: every part of the
// port, for the services that each take only the parts they use (the lookup service Retriever
// and Answerer, status HealthChecker and Verifier, indexsync ManifestSyncer).
type Provider interface {
	port.Retriever
	port.Answerer
	port.ManifestSyncer
	port.HealthChecker
}
