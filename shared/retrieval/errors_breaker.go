package retrieval

// ErrorClassCircuitOpen is the error class of a provider call refused at once because the
// provider's circuit breaker is open: the provider failed repeatedly and is not asked again
// until a probe after the cool-down succeeds. Such an error also wraps ErrUnavailable.
const ErrorClassCircuitOpen = "circuit_open"

// BreakerReporter is implemented by providers with a circuit breaker: BreakerOpen reports
// whether calls are being refused without reaching the provider.
type BreakerReporter interface {
	BreakerOpen() bool
}
