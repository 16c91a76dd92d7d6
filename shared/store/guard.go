package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/breaker"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// GuardOptions configure Guard.
type GuardOptions struct {
	// Wait bounds how long PutTrace holds its caller (default config.DefaultTraceWriteWait): a
	// write still running then goes on in the background, bounded by the store's own deadline,
	// and PutTrace reports it as not done, so that the caller logs the trace for replay.
	Wait time.Duration
	// Failures and Cooldown configure the breaker around trace writes and reads (defaults
	// config.DefaultBreakerFailures and DefaultBreakerCooldown): a write that failed or
	// outlived Wait, or a read that failed, is a failure.
	Failures int
	Cooldown time.Duration
	// Log receives the breaker's changes, at warn; Metrics its StoreBreakerOpen metric (1 while
	// calls are refused, 0 once closed). nil: none.
	Log     *slog.Logger
	Metrics domain.Metrics
}

// Guarded is a store whose traces cannot slow a response down for long: a trace write holds its
// caller at most Wait, and after consecutive failures a circuit breaker refuses trace writes and
// reads at once, without a call to the table, until a probe after the cool-down succeeds. A
// refused or unfinished write returns an error, on which the lookup service logs the trace whole
// for replay (retrieval's record): nothing is lost, the table is asked nothing while it is known
// to hang, and a write that finishes in the background after all leaves the trace both in the
// table and in the log (a replay finds it already present). Every other record passes through
// unchanged.
type Guarded struct {
	Records
	b    *breaker.Breaker
	wait time.Duration
}

var (
	_ Records              = (*Guarded)(nil)
	_ port.BreakerReporter = (*Guarded)(nil)
)

// ErrCircuitOpen is returned, without a call to the table, while the breaker is open.
var ErrCircuitOpen = errors.New("the trace store failed repeatedly: circuit open, no call until a probe succeeds")

// errPending is the breaker's outcome of a write that outlived the wait.
var errPending = errors.New("trace write pending")

// Guard wraps r.
func Guard(r Records, o GuardOptions) *Guarded {
	if o.Wait <= 0 {
		o.Wait = config.DefaultTraceWriteWait
	}
	return &Guarded{Records: r, wait: o.Wait, b: breaker.New(breaker.Options{
		Name: "the trace store", Failures: o.Failures, Cooldown: o.Cooldown,
		Failure: storeFailure, Excluded: func(err error) bool { return errors.Is(err, context.Canceled) },
		Log: o.Log, Metrics: o.Metrics, Metric: "StoreBreakerOpen"})}
}

// storeFailure reports whether an outcome counts against the table: any error but a record it
// refused as given, an absent record and a condition that did not hold (the table answered).
func storeFailure(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return err != nil && !errors.Is(err, ErrInvalid) && !errors.Is(err, lookup.ErrInvalidTrace) &&
		!errors.Is(err, domain.ErrNotFound) && !errors.As(err, &ccf)
}

// BreakerOpen reports whether trace writes and reads are refused (open, or half-open with its
// probe out).
func (g *Guarded) BreakerOpen() bool { return g.b.Open() }

// PutTrace writes the trace, holding the caller at most the wait. The write outlives the
// caller's cancellation: the store's own deadline bounds it.
func (g *Guarded) PutTrace(ctx context.Context, t lookup.Trace) error {
	done, ok := g.b.Allow()
	if !ok {
		return ErrCircuitOpen
	}
	ctx = context.WithoutCancel(ctx)
	res := make(chan error, 1)
	go func() { res <- g.Records.PutTrace(ctx, t) }()
	wait := time.NewTimer(g.wait)
	defer wait.Stop()
	select {
	case err := <-res:
		done(err)
		return err
	case <-wait.C:
		done(errPending)
		return fmt.Errorf("trace write still running after %s: it goes on in the background, the response does not wait", g.wait)
	}
}

// GetTrace reads a trace unless the breaker is open.
func (g *Guarded) GetTrace(ctx context.Context, id string) (lookup.Trace, error) {
	done, ok := g.b.Allow()
	if !ok {
		return lookup.Trace{}, ErrCircuitOpen
	}
	t, err := g.Records.GetTrace(ctx, id)
	done(err)
	return t, err
}

// Probe probes the table (see Dynamo.Probe); while the breaker is open it fails at once.
func (g *Guarded) Probe(ctx context.Context) error {
	if g.b.Open() {
		return ErrCircuitOpen
	}
	if p, ok := g.Records.(interface{ Probe(context.Context) error }); ok {
		return p.Probe(ctx)
	}
	return nil
}
