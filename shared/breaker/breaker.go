// Package breaker is the circuit breaker around the service's remote dependencies (RAGcore, the
// DynamoDB table of traces). After Failures failed calls in a row it refuses calls for Cooldown,
// then lets one probe through: the probe's success closes it, its failure opens it again. A
// refused call costs its caller nothing, so a dependency that hangs costs each caller nothing
// instead of its full deadline. Every change of state is logged at warn and recorded as a metric.
package breaker

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
)

// Options configure a Breaker.
type Options struct {
	// Name names the dependency in the log lines ("RAGcore", "the trace store").
	Name string
	// Failures is the number of consecutive failed calls that opens the breaker (default
	// config.DefaultBreakerFailures).
	Failures int
	// Cooldown is how long the breaker stays open before it lets one probe through (half-open;
	// default config.DefaultBreakerCooldown).
	Cooldown time.Duration
	// Failure says whether a call's error counts against the dependency; nil: every error.
	Failure func(error) bool
	// Excluded says whether a call's outcome is not counted at all (a caller that went away);
	// nil: none is.
	Excluded func(error) bool
	// Log receives the changes of state, at warn; nil discards them.
	Log *slog.Logger
	// Metrics receives Metric (1 while calls are refused, 0 once closed) at every change of
	// state; nil or an empty Metric records nothing.
	Metrics domain.Metrics
	Metric  string
}

// Breaker is a circuit breaker. It is safe for concurrent use.
type Breaker struct {
	cb *gobreaker.TwoStepCircuitBreaker[struct{}]
	o  Options
}

// New returns a closed breaker.
func New(o Options) *Breaker {
	if o.Failures <= 0 {
		o.Failures = config.DefaultBreakerFailures
	}
	if o.Cooldown <= 0 {
		o.Cooldown = config.DefaultBreakerCooldown
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Failure == nil {
		o.Failure = func(err error) bool { return err != nil }
	}
	b := &Breaker{o: o}
	failures := uint32(o.Failures)
	settings := gobreaker.Settings{
		Name:          o.Name,
		MaxRequests:   1, // one probe when half-open
		Timeout:       o.Cooldown,
		ReadyToTrip:   func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= failures },
		IsSuccessful:  func(err error) bool { return !o.Failure(err) },
		OnStateChange: func(_ string, from, to gobreaker.State) { b.changed(from, to) },
	}
	if o.Excluded != nil {
		settings.IsExcluded = o.Excluded
	}
	b.cb = gobreaker.NewTwoStepCircuitBreaker[struct{}](settings)
	return b
}

// Allow asks the breaker for one call. ok is false while the breaker refuses calls (open, or
// half-open with its probe out): then the call must not be made. Otherwise done must be called
// once with the call's outcome.
func (b *Breaker) Allow() (done func(error), ok bool) {
	done, err := b.cb.Allow()
	if err != nil { // gobreaker.ErrOpenState, or ErrTooManyRequests while the probe is out
		return nil, false
	}
	return done, true
}

// Open reports whether calls are refused: open, or half-open (only the probe goes through).
func (b *Breaker) Open() bool { return b.cb.State() != gobreaker.StateClosed }

// changed logs a change of state at warn and records the metric. It runs under the breaker's
// lock and so must not call the breaker.
func (b *Breaker) changed(from, to gobreaker.State) {
	o := b.o
	msg := o.Name + " circuit breaker " + to.String()
	switch to {
	case gobreaker.StateOpen:
		msg += fmt.Sprintf(": calls fail fast for %s", o.Cooldown)
	case gobreaker.StateHalfOpen:
		msg += ": one probe goes through"
	case gobreaker.StateClosed:
		msg += ": " + o.Name + " answers again"
	}
	o.Log.Warn(msg, "breaker", o.Name, "breaker_from", from.String(), "breaker_to", to.String(),
		"failures_to_open", o.Failures, "cooldown_ms", o.Cooldown.Milliseconds())
	if o.Metrics != nil && o.Metric != "" {
		v := 0.0
		if to != gobreaker.StateClosed {
			v = 1
		}
		o.Metrics.Emit(nil, domain.Metric{Name: o.Metric, Unit: "Count", Value: v})
	}
}
