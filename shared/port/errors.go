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

// ErrorClassCircuitOpen is the error class of a provider call refused at once because the
// provider's circuit breaker is open: the provider failed repeatedly and is not asked again
// until a probe after the cool-down succeeds. Such an error also wraps ErrUnavailable.
const ErrorClassCircuitOpen = "circuit_open"

// ErrorClass names an error for traces and logs without its message: the provider's own class,
// else "timeout", "canceled", "unavailable" or "error".
func ErrorClass(err error) string {
	var c interface{ ErrorClass() string }
	switch {
	case errors.As(err, &c):
		return c.ErrorClass()
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, ErrUnavailable):
		return "unavailable"
	}
	return "error"
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
