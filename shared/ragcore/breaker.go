package ragcore

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/breaker"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
)

// BreakerOptions configure the circuit breaker around every RAGcore call.
type BreakerOptions struct {
	// Failures is the number of consecutive failed calls that opens the breaker (default
	// config.DefaultBreakerFailures). A failed call is one that timed out, could not reach
	// RAGcore, or ended on a 5xx; a 4xx, a bad response and a caller that went away are not
	// (RAGcore answered, or was never at fault).
	Failures int
	// Cooldown is how long the breaker stays open before it lets one probe through (half-open);
	// the probe's success closes it, its failure opens it again (default
	// config.DefaultBreakerCooldown).
	Cooldown time.Duration
}

// circuit is the circuit breaker of a Client. While it is open, calls fail at once with a
// ClassCircuitOpen error that is port.ErrUnavailable, without a request to RAGcore, so that a
// hanging RAGcore costs each caller nothing instead of the full timeout.
type circuit struct{ b *breaker.Breaker }

var errCircuitOpen = errors.New("RAGcore failed repeatedly; calls fail fast until a probe succeeds")

func newBreaker(o BreakerOptions, log *slog.Logger, metrics domain.Metrics) *circuit {
	return &circuit{b: breaker.New(breaker.Options{Name: "RAGcore", Failures: o.Failures, Cooldown: o.Cooldown,
		Failure:  breakerFailure,
		Excluded: func(err error) bool { return classOf(err) == ClassCanceled },
		Log:      log, Metrics: metrics, Metric: "BreakerOpen"})}
}

// allow asks the breaker for a call; done records its outcome.
func (b *circuit) allow(op string) (done func(error), err error) {
	done, ok := b.b.Allow()
	if !ok {
		return nil, &Error{Op: op, Class: ClassCircuitOpen, err: errCircuitOpen, unreachable: true}
	}
	return done, nil
}

// open reports whether calls are refused: open, or half-open (only the probe goes through).
func (b *circuit) open() bool { return b.b.Open() }

// breakerFailure reports whether a call's error counts against RAGcore: a timeout, no
// connection, or a 5xx. 4xx (429 included: RAGcore answered, asking for patience), bad responses
// and the caller's cancellation do not.
func breakerFailure(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return err != nil
	}
	switch e.Class {
	case ClassTimeout:
		return true
	case ClassUnavailable:
		return e.Status == 0 || e.Status >= http.StatusInternalServerError
	}
	return false
}
