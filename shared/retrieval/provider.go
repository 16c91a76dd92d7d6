package retrieval

import "github.com/northstar-mobility/mobilityops-knowledge/shared/port"

// LookupProvider is what the lookup service uses of a knowledge provider: L1 retrieval and
// grounded answers.
type LookupProvider interface {
	port.Retriever
	port.Answerer
}
