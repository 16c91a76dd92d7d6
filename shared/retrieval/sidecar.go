package retrieval

import (
	"context"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// Sidecar is the retrieval requirements' disabled-by-default comparison path: it runs beside L1 under its own
// deadline and reports its results and a comparison with the main blocks, never changing them.
type Sidecar interface {
	// Query runs the sidecar; it never fails: a failure is a report with status "failed".
	Query(ctx context.Context, q port.Query) SidecarReport
	// Compare summarises the sidecar's results against the main evidence blocks.
	Compare(report SidecarReport, blocks []EvidenceBlock, scoreKind string) *Comparison
}

// pendingSidecar is a sidecar query in flight.
type pendingSidecar struct {
	s        *Service
	done     chan SidecarReport
	deadline time.Time
}

// startSidecar starts the sidecar beside L1, with the L0 domain as its filter when unambiguous,
// under its own deadline. Off, it does nothing.
func (s *Service) startSidecar(ctx context.Context, req LookupRequest, text string, hints L0Hints) *pendingSidecar {
	if s.opts.Sidecar == nil {
		return nil
	}
	p := &pendingSidecar{s: s, done: make(chan SidecarReport, 1), deadline: s.now().Add(s.opts.SidecarTimeout)}
	q := port.Query{Question: text, Language: req.Language, TopK: req.TopK, Actor: req.Actor, CorrelationID: req.CorrelationID}
	if len(hints.Domains) == 1 {
		q.Category = hints.Domains[0]
	}
	// The sidecar's context does not end with the caller's: its deadline alone bounds it.
	sctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), p.deadline)
	go func() {
		defer cancel()
		p.done <- s.opts.Sidecar.Query(sctx, q)
	}()
	return p
}

// wait takes the sidecar's report, waiting no longer than the sidecar's deadline (plus a
// moment for the report to arrive), and adds the comparison with the main blocks.
func (p *pendingSidecar) wait(blocks []EvidenceBlock, scoreKind string) SidecarReport {
	if p == nil {
		return SidecarReport{SidecarStatus: SidecarStatus{Status: "disabled"}}
	}
	t := time.NewTimer(time.Until(p.deadline) + sidecarGrace)
	defer t.Stop()
	var r SidecarReport
	select {
	case r = <-p.done:
	case <-t.C:
		r = SidecarReport{SidecarStatus: SidecarStatus{Status: "failed", ErrorClass: "timeout"}}
	}
	r.Enabled = true
	if r.Status == "ok" {
		r.Comparison = p.s.opts.Sidecar.Compare(r, blocks, scoreKind)
	}
	return r
}

// sidecarGrace is how long after its deadline a sidecar's report may still arrive.
const sidecarGrace = 20 * time.Millisecond
