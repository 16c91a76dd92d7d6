package retrieval

import (
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// emit records one call's metrics: its latency and count by layer and provider, and whether L1
// failed.
func (s *Service) emit(tool string, layer lookup.Layer, l1Status lookup.L1Status, took time.Duration) {
	if s.opts.Metrics == nil {
		return
	}
	failed := 0.0
	if l1Status == lookup.L1Failed || l1Status == lookup.L1Unavailable {
		failed = 1
	}
	prefix := "Lookup"
	if tool == lookup.ToolAsk {
		prefix = "Ask"
	}
	metrics := []domain.Metric{
		{Name: prefix + "Latency", Unit: "Milliseconds", Value: ms(took)},
		{Name: prefix + "s", Unit: "Count", Value: 1},
		{Name: "L1Failures", Unit: "Count", Value: failed},
	}
	// A provider behind a circuit breaker says whether it is open: BreakerOpen is 1 for every
	// call made while it is (the alarm and the dashboard read it).
	if b, ok := s.provider.(port.BreakerReporter); ok {
		open := 0.0
		if b.BreakerOpen() {
			open = 1
		}
		metrics = append(metrics, domain.Metric{Name: "BreakerOpen", Unit: "Count", Value: open})
	}
	s.opts.Metrics.Emit(map[string]string{"layer": string(layer), "provider": s.provider.Name()}, metrics...)
}

// EvidenceMetrics names the count metric of each evidence state: every lookup and ask counts 1
// in the metric of its state and 0 in the others, so that the sums are the counts per state.
var EvidenceMetrics = map[port.EvidenceState]string{
	port.StateGrounded: "EvidenceGrounded", port.StateInsufficient: "EvidenceInsufficient", port.StateUnavailable: "EvidenceUnavailable",
}

// emitEvidence records a call's evidence state from its trace, by tool and provider. It is
// emit's companion for what only the finished trace knows.
func (s *Service) emitEvidence(t lookup.Trace) {
	if s.opts.Metrics == nil {
		return
	}
	metrics := make([]domain.Metric, 0, len(EvidenceMetrics))
	for _, state := range []port.EvidenceState{port.StateGrounded, port.StateInsufficient, port.StateUnavailable} {
		v := 0.0
		if t.RetrievalDetails.EvidenceState == state {
			v = 1
		}
		metrics = append(metrics, domain.Metric{Name: EvidenceMetrics[state], Unit: "Count", Value: v})
	}
	d := t.RetrievalDetails
	metrics = append(metrics,
		domain.Metric{Name: ClarifyingMetrics.Offered, Unit: "Count", Value: one(len(d.Clarification) > 0)},
		domain.Metric{Name: ClarifyingMetrics.Confirmed, Unit: "Count", Value: one(d.Procedure != "")},
		domain.Metric{Name: ClarifyingMetrics.ConfirmedGrounded, Unit: "Count", Value: one(d.Procedure != "" && d.EvidenceState == port.StateGrounded)})
	s.opts.Metrics.Emit(map[string]string{"tool": t.Tool, "provider": s.provider.Name()}, metrics...)
}

// ClarifyingMetrics name the count metrics of the clarifying turn, beside the evidence states:
// the calls whose answer offered a clarification, the follow-ups that confirmed a procedure, and
// those of them that came back grounded (each call counts 1 or 0 in each).
var ClarifyingMetrics = struct{ Offered, Confirmed, ConfirmedGrounded string }{
	Offered: "ClarificationsOffered", Confirmed: "FollowUpsConfirmed", ConfirmedGrounded: "FollowUpsGrounded",
}

// one is 1 for true, 0 for false: a count metric's value.
func one(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
