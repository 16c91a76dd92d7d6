package port

import (
	"context"
	"errors"
	"net"
	"net/url"
)

// ErrUnavailable marks a provider that cannot be reached at all (as opposed to one that failed a
// request). Providers wrap it; the services check it with errors.Is, and the transport answers 503.
var ErrUnavailable = errors.New("provider unavailable")

// Error classes every outbound adapter names its failures by (RAGcore, the sidecar, the stores),
// written here once; an adapter adds classes of its own ("rejected", "throttled"). A class names
// what went wrong without a peer's message, URL or token, so it is safe for traces, logs and
// metrics.
const (
	ClassTimeout      = "timeout"      // the deadline passed
	ClassCanceled     = "canceled"     // the caller went away
	ClassUnavailable  = "unavailable"  // not reachable, a 5xx, or any other failure to answer
	ClassUnauthorized = "unauthorized" // the credentials were refused (401, 403)
	ClassBadResponse  = "bad_response" // an answer that could not be read, or of the wrong shape
	ClassError        = "error"        // anything else
	// ErrorClassCircuitOpen is the class of a provider call refused at once because the
	// provider's circuit breaker is open: the provider failed repeatedly and is not asked again
	// until a probe after the cool-down succeeds. Such an error also wraps ErrUnavailable.
	ErrorClassCircuitOpen = "circuit_open"
)

// ErrorClass names an error for traces and logs without its message: the provider's own class,
// else ClassTimeout, ClassCanceled, ClassUnavailable or ClassError.
func ErrorClass(err error) string {
	var c interface{ ErrorClass() string }
	switch {
	case errors.As(err, &c):
		return c.ErrorClass()
	case errors.Is(err, context.DeadlineExceeded):
		return ClassTimeout
	case errors.Is(err, context.Canceled):
		return ClassCanceled
	case errors.Is(err, ErrUnavailable):
		return ClassUnavailable
	}
	return ClassError
}

// SafeError is an error's text for logs without the peer's URL, address or host name: an HTTP
// client's *url.Error names the URL (which could carry a question or a token in its query), and
// *net.OpError and *net.DNSError name internal hosts. An error that classifies itself
// (ErrorClass) is a provider's own, written to be safe, and is kept whole.
func SafeError(err error) string {
	if _, ok := err.(interface{ ErrorClass() string }); ok {
		return err.Error()
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return "name resolution failed"
	}
	var op *net.OpError
	if errors.As(err, &op) {
		if op.Err != nil {
			return op.Op + ": " + op.Err.Error()
		}
		return op.Op + " failed"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + " request: " + SafeError(ue.Err)
	}
	return err.Error()
}
