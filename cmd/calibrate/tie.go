package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
)

// The semantic search's tie (retrieval.SemanticTie: a preference for another procedure by less
// than it is outvoted when every other path is decisive for the primary) is fitted on the
// configured provider at the configured thresholds, where the cosine scores are this platform's:
// each question is looked up once (the provider's answers are cached, so no call is repeated)
// and its verdict at each tie tried follows from its signals (retrieval.GroundedAtTie). The
// recommended tie grounds the most answerable questions right while it grounds no more negatives
// than no tie at all, and more wrong ones by at most one in tieWrongSlack answerable questions (a
// confident wrong procedure is the worst outcome); among ties that ground as many, the configured
// one, else the smallest.

// tiesTried are the ties measured.
var tiesTried = []float64{0, 0.005, 0.01, 0.015, 0.02, 0.03}

// tieWrongSlack bounds the wrong-grounded answers a tie may add to no tie's: one per this many
// answerable questions.
const tieWrongSlack = 500

// tieFit is the tie's fit: its rows over the ties tried, the configured and recommended tie, and
// the holdout sets' rows at both.
type tieFit struct {
	fitted[tieCount]
}

// tieCount is one tie's outcome over a set of questions.
type tieCount struct {
	Tie float64 `json:"tie"`
	counts
}

// tieSignals is one question's verdict at the configured tie and its signals.
type tieSignals struct {
	expect   string
	grounded bool
	primary  string
	sig      retrieval.Signals
}

// tie fits the semantic search's tie on the questions to choose on and reports the holdout's rows
// at the configured and the recommended tie.
func (c *calibration) tie(ctx context.Context, choose, hold []labelled) (tieFit, error) {
	svc := c.service(c.configured)
	sigs, err := tieLookups(ctx, svc, choose, c.opts.timeout)
	if err != nil {
		return tieFit{}, err
	}
	held, err := tieLookups(ctx, svc, hold, c.opts.timeout)
	if err != nil {
		return tieFit{}, fmt.Errorf("holdout: %w", err)
	}
	return fitTie(sigs, held, retrieval.SemanticTie), nil
}

// fitTie measures every tie tried on sigs, recommends one (see above), and measures held at the
// configured and the recommended tie.
func fitTie(sigs, held []tieSignals, configured float64) tieFit {
	var f tieFit
	f.Configured = configured
	for _, t := range tiesTried {
		f.Rows = append(f.Rows, countAtTie(sigs, t))
	}
	var best *tieCount
	base := f.Rows[0].counts // no tie
	for i := range f.Rows {
		r := &f.Rows[i]
		within := r.NegativesGrounded <= base.NegativesGrounded && tieWrongSlack*(r.Wrong-base.Wrong) <= r.Answerable
		if within && (best == nil || r.Right > best.Right || r.Right == best.Right && r.Tie == configured) {
			best = r // among equals, the configured tie: nothing tells to change it
		}
	}
	var rec *float64
	if best != nil {
		rec = &best.Tie
	}
	f.recommend(rec, len(held) > 0, func(t float64) tieCount { return countAtTie(held, t) })
	return f
}

// tieLookups looks each question up once, each within timeout as the grid's lookups are, keeping
// its verdict and signals; a question whose retrieval fails is left out.
func tieLookups(ctx context.Context, svc *retrieval.Service, qs []labelled, timeout time.Duration) ([]tieSignals, error) {
	out := make([]tieSignals, 0, len(qs))
	for _, q := range qs {
		lctx, cancel := context.WithTimeout(ctx, timeout)
		res, sig, err := svc.LookupSignals(lctx, lookup.LookupRequest{Question: q.Question, Language: q.Language, TopK: 5,
			Actor: port.Actor{ID: "calibrate"}})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", q.Where, err)
		}
		if res.Retrieval.L1.Status != lookup.L1OK {
			continue
		}
		s := tieSignals{expect: q.Expect, grounded: res.EvidenceState == port.StateGrounded, sig: sig}
		if res.Primary != nil {
			s.primary = res.Primary.DocumentID
		}
		out = append(out, s)
	}
	return out, nil
}

// countAtTie counts the questions' verdicts at tie.
func countAtTie(sigs []tieSignals, tie float64) tieCount {
	r := tieCount{Tie: tie}
	for _, s := range sigs {
		r.add(s.expect, judge(retrieval.GroundedAtTie(s.grounded, s.sig, tie), s.primary, s.expect))
	}
	return r
}

// writeTie writes the tie's fit as text.
func writeTie(w io.Writer, f tieFit) {
	fmt.Fprintf(w, "\nthe semantic search's tie (retrieval.SemanticTie), at the configured thresholds: the most right-grounded "+
		"with no more negatives grounded than no tie and at most one more wrong-grounded per %d answerable questions\n", tieWrongSlack)
	line := func(prefix string, r tieCount, marks string) {
		fmt.Fprintf(w, "    %s %.3f: right %5.1f %% of %d, wrong %4.1f %%, negatives grounded %4.1f %% of %d%s\n", prefix, r.Tie,
			100*ratio(r.Right, r.Answerable), r.Answerable, 100*ratio(r.Wrong, r.Answerable), 100*ratio(r.NegativesGrounded, r.Negatives),
			r.Negatives, marks)
	}
	for _, r := range f.Rows {
		line("tie", r, f.marks(r.Tie))
	}
	for _, r := range f.Holdout {
		line("holdout at", r, "")
	}
}
