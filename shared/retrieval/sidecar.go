package retrieval

import (
	"context"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/span"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// pendingSidecar is a sidecar query in flight.
type pendingSidecar struct {
	done     chan lookup.SidecarReport
	deadline time.Time
}

// startSidecar starts the sidecar beside L1, with the L0 domain as its filter when unambiguous,
// under its own deadline. Off, it does nothing.
func (s *Service) startSidecar(ctx context.Context, req lookup.LookupRequest, text string, hints lookup.L0Hints) *pendingSidecar {
	if s.opts.Sidecar == nil {
		return nil
	}
	p := &pendingSidecar{done: make(chan lookup.SidecarReport, 1), deadline: s.now().Add(s.opts.SidecarTimeout)}
	q := port.Query{Question: text, Language: req.Language, TopK: req.TopK, Actor: req.Actor, CorrelationID: req.CorrelationID}
	if len(hints.Domains) == 1 {
		q.Category = hints.Domains[0]
	}
	// The sidecar's context does not end with the caller's: its deadline alone bounds it.
	sctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), p.deadline)
	go func() {
		defer cancel()
		sctx, end := span.Start(sctx, "sidecar")
		r := reportOf(s.opts.Sidecar.Query(sctx, q))
		end() // before the report: the lookup's flush must find the span closed
		p.done <- r
	}()
	return p
}

// wait takes the sidecar's report, waiting no longer than the sidecar's deadline (plus a
// moment for the report to arrive), and adds the comparison with the main blocks.
func (p *pendingSidecar) wait(blocks []lookup.EvidenceBlock, scoreKind string) lookup.SidecarReport {
	if p == nil {
		return lookup.SidecarReport{SidecarStatus: lookup.SidecarStatus{Status: domain.SidecarDisabled}}
	}
	t := time.NewTimer(time.Until(p.deadline) + sidecarGrace)
	defer t.Stop()
	var r lookup.SidecarReport
	select {
	case r = <-p.done:
	case <-t.C:
		r = lookup.SidecarReport{SidecarStatus: lookup.SidecarStatus{Status: domain.SidecarFailed, ErrorClass: port.ClassTimeout}}
	}
	r.Enabled = true
	if r.Status == domain.SidecarOK {
		r.Comparison = compareSidecar(r, blocks, scoreKind)
	}
	return r
}

// reportOf is a sidecar's result as the lookup reports it.
func reportOf(r port.SidecarResult) lookup.SidecarReport {
	return lookup.SidecarReport{SidecarStatus: lookup.SidecarStatus{Status: r.Status, ErrorClass: r.ErrorClass},
		ScoreKind: r.ScoreKind, LatencyMs: r.LatencyMs, Results: r.Results}
}

// compareSidecar compares the sidecar's results with the main blocks by identity and rank; the
// main blocks' scores keep their own label and are never set against the sidecar's.
func compareSidecar(report lookup.SidecarReport, blocks []lookup.EvidenceBlock, scoreKind string) *lookup.Comparison {
	primary := make([]port.Comparable, 0, len(blocks))
	for _, bl := range blocks {
		primary = append(primary, port.Comparable{Source: bl.Source, DocumentID: bl.DocumentID, Title: bl.Title,
			Breadcrumb: bl.Breadcrumb, Category: bl.Category, Version: bl.Version, Rank: bl.Rank,
			Preview: textproc.Clip(bl.Content, lookup.SummaryChars), Score: bl.Score})
	}
	c := Compare(scoreKind, primary, report.ScoreKind, report.Results, len(blocks))
	return &c
}

// sidecarGrace is how long after its deadline a sidecar's report may still arrive.
const sidecarGrace = 20 * time.Millisecond
