package breaker_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/breaker"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
)

type metrics struct{ values []float64 }

func (m *metrics) Count(string, int) {}
func (m *metrics) Emit(_ map[string]string, ms ...domain.Metric) {
	for _, x := range ms {
		if x.Name == "StoreBreakerOpen" {
			m.values = append(m.values, x.Value)
		}
	}
}

var errDown = errors.New("down")

// call runs one call through b with outcome err; it reports whether the call was let through.
func call(b *breaker.Breaker, err error) bool {
	done, ok := b.Allow()
	if ok {
		done(err)
	}
	return ok
}

// TestOpensRefusesProbesAndCloses runs in a synctest bubble: the breaker's clock is the
// bubble's, which moves only when the test sleeps, so a machine that is slow between two steps
// cannot end the cool-down behind the test's back.
func TestOpensRefusesProbesAndCloses(t *testing.T) { synctest.Test(t, opensRefusesProbesAndCloses) }

func opensRefusesProbesAndCloses(t *testing.T) {
	const cooldown = 20 * time.Millisecond
	logs := &bytes.Buffer{}
	m := &metrics{}
	b := breaker.New(breaker.Options{Name: "the trace store", Failures: 3, Cooldown: cooldown,
		Log: slog.New(slog.NewJSONHandler(logs, nil)), Metrics: m, Metric: "StoreBreakerOpen"})
	for i := range 3 {
		if b.Open() || !call(b, errDown) {
			t.Fatalf("call %d refused before 3 failures", i+1)
		}
	}
	if !b.Open() || call(b, nil) {
		t.Fatal("3 failures in a row did not open the breaker")
	}
	time.Sleep(cooldown + time.Millisecond) // past the cool-down, one probe goes through; a second waits for its outcome
	done, ok := b.Allow()
	if !ok {
		t.Fatal("no probe after the cool-down")
	}
	if _, second := b.Allow(); second || !b.Open() {
		t.Fatal("a second call went through while the probe was out")
	}
	done(errDown) // the probe failed: open again
	if !b.Open() || call(b, nil) {
		t.Fatal("a failed probe did not open the breaker again")
	}
	time.Sleep(cooldown + time.Millisecond)
	if !call(b, nil) || b.Open() {
		t.Fatal("a good probe did not close the breaker")
	}
	out := logs.String()
	for _, want := range []string{`"msg":"the trace store circuit breaker open: calls fail fast for 20ms"`,
		`"breaker_to":"half-open"`, `the trace store answers again`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
	if got := m.values; len(got) != 5 || got[0] != 1 || got[4] != 0 {
		t.Errorf("metric values %v, want 1 at open, half-open, open, half-open and 0 at closed", got)
	}
}

func TestOnlyFailuresCount(t *testing.T) {
	b := breaker.New(breaker.Options{Failures: 2, Cooldown: time.Hour,
		Failure:  func(err error) bool { return errors.Is(err, errDown) },
		Excluded: func(err error) bool { return errors.Is(err, context.Canceled) }})
	// Errors that are not failures, and excluded outcomes, never open it nor break a run.
	for _, err := range []error{errors.New("bad request"), errDown, context.Canceled, nil, errDown, context.Canceled, errors.New("x")} {
		if !call(b, err) {
			t.Fatalf("refused after %v", err)
		}
	}
	if b.Open() {
		t.Fatal("failures apart opened the breaker")
	}
	call(b, errDown)
	call(b, context.Canceled) // excluded: the run goes on
	call(b, errDown)
	if !b.Open() {
		t.Fatal("two failures in a row did not open the breaker")
	}
}
