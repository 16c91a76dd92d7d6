package ragcore

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
)

// Breaker defaults (RAGCORE_BREAKER_FAILURES, RAGCORE_BREAKER_COOLDOWN_MS).
const (
	DefaultBreakerFailures = 5
	DefaultBreakerCooldown = 10 * time.Second
)

// BreakerOptions configure the circuit breaker around every RAGcore call.
type BreakerOptions struct {
	// Failures is the number of consecutive failed calls that opens the breaker (default 5). A
	// failed call is one that timed out, could not reach RAGcore, or ended on a 5xx; a 4xx, a
	// bad response and a caller that went away are not (RAGcore answered, or was never at fault).
	Failures int
	// Cooldown is how long the breaker stays open before it lets one probe through (half-open);
	// the probe's success closes it, its failure opens it again (default 10 s).
	Cooldown time.Duration
}

// breaker is the circuit breaker of a Client. While it is open, calls fail at once with a
// ClassCircuitOpen error that is port.ErrUnavailable, without a request to RAGcore, so that a
// hanging RAGcore costs each caller nothing instead of the full timeout.
type breaker struct {
	cb      *gobreaker.TwoStepCircuitBreaker[struct{}]
	log     *slog.Logger
	metrics domain.Metrics
}

var errCircuitOpen = errors.New("RAGcore failed repeatedly; calls fail fast until a probe succeeds")

func newBreaker(o BreakerOptions, log *slog.Logger, metrics domain.Metrics) *breaker {
	if o.Failures <= 0 {
		o.Failures = DefaultBreakerFailures
	}
	if o.Cooldown <= 0 {
		o.Cooldown = DefaultBreakerCooldown
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &breaker{log: log, metrics: metrics}
	failures := uint32(o.Failures)
	b.cb = gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:         "ragcore",
		MaxRequests:  1, // one probe when half-open
		Timeout:      o.Cooldown,
		ReadyToTrip:  func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= failures },
		IsSuccessful: func(err error) bool { return !breakerFailure(err) },
		IsExcluded:   func(err error) bool { return classOf(err) == ClassCanceled },
		OnStateChange: func(_ string, from, to gobreaker.State) {
			b.changed(from, to, o)
		},
	})
	return b
}

// allow asks the breaker for a call; done records its outcome.
func (b *breaker) allow(op string) (done func(error), err error) {
	done, berr := b.cb.Allow()
	if berr != nil { // gobreaker.ErrOpenState, or ErrTooManyRequests while the probe is out
		return nil, &Error{Op: op, Class: ClassCircuitOpen, err: errCircuitOpen, unreachable: true}
	}
	return done, nil
}

// open reports whether calls are refused: open, or half-open (only the probe goes through).
func (b *breaker) open() bool { return b.cb.State() != gobreaker.StateClosed }

// changed logs a state change at warn and records BreakerOpen (1 while calls are refused).
// It runs under the breaker's lock and so must not call the breaker.
func (b *breaker) changed(from, to gobreaker.State, o BreakerOptions) {
	msg := "RAGcore circuit breaker " + to.String()
	switch to {
	case gobreaker.StateOpen:
		msg += fmt.Sprintf(": calls fail fast for %s", o.Cooldown)
	case gobreaker.StateHalfOpen:
		msg += ": one probe goes through"
	case gobreaker.StateClosed:
		msg += ": RAGcore answers again"
	}
	b.log.Warn(msg, "breaker_from", from.String(), "breaker_to", to.String(),
		"failures_to_open", o.Failures, "cooldown_ms", o.Cooldown.Milliseconds())
	if b.metrics != nil {
		v := 0.0
		if to != gobreaker.StateClosed {
			v = 1
		}
		b.metrics.Emit(nil, domain.Metric{Name: "BreakerOpen", Unit: "Count", Value: v})
	}
}

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
