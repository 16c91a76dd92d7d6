package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// The margins of the clarifying turn are shares of the language's LexicalMinPoints, fitted on
// lexical evidence: the demo provider over the same corpus, which is also the evidence every
// lookup falls back to when the semantic search is down (docs/retrieval.md, "The clarifying
// turn"). CoveredShare decides whether an answer that is not grounded offers a clarification;
// ConfirmedShare whether a follow-up confirming a procedure is grounded; HalfHeldShare both, for a
// procedure holding half the question with its subject named clearly. Each is recommended as the
// share that serves the most answerable questions while the questions no procedure answers stay
// within its limit, the others at their configured shares.
const (
	// coveredLimit is the most negatives (off-topic, near-domain) an answer may offer a
	// clarification to by CoveredShare; confirmedLimit the most a confirmed follow-up may ground;
	// halfHeldLimit the most offered a clarification by either rule.
	coveredLimit, confirmedLimit, halfHeldLimit = 0.07, 0.10, 0.09
)

// marginShares are the shares tried.
var marginShares = []float64{0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0}

// marginsOut is the fit of the three margins.
type marginsOut struct {
	Covered   marginFit `json:"covered_share"`
	Confirmed marginFit `json:"confirmed_share"`
	HalfHeld  marginFit `json:"half_held_share"`
}

// marginFit is one margin's fit: the negatives' limit, its rows over the shares tried, the
// configured and recommended share, and the holdout sets' rows at both.
type marginFit struct {
	Limit float64 `json:"negatives_limit"`
	fitted[marginRow]
}

// marginRow is one share's outcome: of the answerable questions it applies to, the share it
// serves (offered a clarification, or grounded when confirmed), and of the negatives, the share
// it wrongly serves.
type marginRow struct {
	Share          float64 `json:"share"`
	Answerable     int     `json:"answerable"`
	Negatives      int     `json:"negatives"`
	AnswerableRate float64 `json:"answerable_rate"`
	NegativesRate  float64 `json:"negatives_rate"`
}

// marginSignals are the lexical signals of one question: of its lookup when it was not
// grounded (weak), and of its follow-up confirming the expected procedure (an answerable
// question's) or its primary block's (a negative's).
type marginSignals struct {
	lang            string
	negative        bool
	weak, confirmed *retrieval.Signals
}

// margins fits both margins on the questions to choose on and reports the holdout's rows.
func (c *calibration) margins(ctx context.Context, choose, hold []labelled) (marginsOut, error) {
	svc := retrieval.New(c.parts.Index, demo.New(c.parts.Index), store.NewMemory(), retrieval.DefaultOptions(),
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	sigs, err := marginLookups(ctx, svc, choose)
	if err != nil {
		return marginsOut{}, err
	}
	held, err := marginLookups(ctx, svc, hold)
	if err != nil {
		return marginsOut{}, fmt.Errorf("holdout: %w", err)
	}
	covered := func(s marginSignals, share float64) (bool, bool) {
		return s.weak != nil, s.weak != nil && retrieval.LexicallyCovered(*s.weak, s.lang, share, retrieval.HalfHeldShare)
	}
	confirmed := func(s marginSignals, share float64) (bool, bool) {
		return s.confirmed != nil, s.confirmedAt(share, retrieval.HalfHeldShare)
	}
	// An answerable question is served by the half share when offered a clarification and
	// grounded once its procedure is confirmed; a negative, when offered a clarification.
	halfHeld := func(s marginSignals, half float64) (bool, bool) {
		offered := s.weak != nil && retrieval.LexicallyCovered(*s.weak, s.lang, retrieval.CoveredShare, half)
		return s.weak != nil, offered && (s.negative || s.confirmedAt(retrieval.ConfirmedShare, half))
	}
	return marginsOut{
		Covered:   fit(sigs, held, retrieval.CoveredShare, coveredLimit, covered),
		Confirmed: fit(sigs, held, retrieval.ConfirmedShare, confirmedLimit, confirmed),
		HalfHeld:  fit(sigs, held, retrieval.HalfHeldShare, halfHeldLimit, halfHeld),
	}, nil
}

// confirmedAt reports whether the follow-up confirming a procedure is grounded at the shares.
func (s marginSignals) confirmedAt(share, half float64) bool {
	return s.confirmed != nil && s.confirmed.Uncovered.Term == "" && retrieval.LexicallyConfirmed(*s.confirmed, s.lang, share, half)
}

// marginLookups looks each question up on lexical evidence, then confirms a procedure.
func marginLookups(ctx context.Context, svc *retrieval.Service, qs []labelled) ([]marginSignals, error) {
	out := make([]marginSignals, 0, len(qs))
	for _, q := range qs {
		req := lookup.LookupRequest{Question: q.Question, Language: q.Language, TopK: 5, Actor: port.Actor{ID: "calibrate"}}
		res, sig, err := svc.LookupSignals(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", q.Where, err)
		}
		s := marginSignals{lang: q.Language, negative: q.Expect == ""}
		grounded := res.EvidenceState == port.StateGrounded
		primary := ""
		if res.Primary != nil {
			primary = res.Primary.DocumentID
		}
		if !grounded && (s.negative || primary == q.Expect) {
			s.weak = &sig
		}
		req.Procedure = q.Expect
		if s.negative {
			req.Procedure = primary
		}
		if req.Procedure != "" {
			if _, csig, err := svc.LookupSignals(ctx, req); err == nil {
				s.confirmed = &csig
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// fit measures a margin's rule at every share and recommends the share serving the most
// answerable questions within the negatives' limit (the higher share of equals, the safer).
func fit(sigs, held []marginSignals, configured, limit float64, rule func(marginSignals, float64) (applies, serves bool)) marginFit {
	f := marginFit{Limit: limit}
	f.Configured = configured
	var best *marginRow
	for _, share := range marginShares {
		r := measureMargin(sigs, share, rule)
		f.Rows = append(f.Rows, r)
		if r.NegativesRate <= limit && (best == nil || r.AnswerableRate >= best.AnswerableRate) {
			best = &f.Rows[len(f.Rows)-1]
		}
	}
	var rec *float64
	if best != nil {
		rec = &best.Share
	}
	f.recommend(rec, len(held) > 0, func(share float64) marginRow { return measureMargin(held, share, rule) })
	return f
}

// measureMargin is one share's row.
func measureMargin(sigs []marginSignals, share float64, rule func(marginSignals, float64) (bool, bool)) marginRow {
	r := marginRow{Share: share}
	served, wrong := 0, 0
	for _, s := range sigs {
		applies, serves := rule(s, share)
		switch {
		case !applies:
		case s.negative:
			r.Negatives++
			if serves {
				wrong++
			}
		default:
			r.Answerable++
			if serves {
				served++
			}
		}
	}
	r.AnswerableRate, r.NegativesRate = round4(ratio(served, r.Answerable)), round4(ratio(wrong, r.Negatives))
	return r
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// writeMargins writes the margins' fit as text.
func writeMargins(w io.Writer, m marginsOut) {
	fmt.Fprintln(w, "\nmargins of the clarifying turn, on lexical evidence (the demo provider over the same corpus):")
	for _, x := range []struct {
		name, what string
		fit        marginFit
	}{
		{"COVERED_SHARE (retrieval.CoveredShare)", "answerable not grounded, primary right: offered a clarification; negatives offered one", m.Covered},
		{"CONFIRMED_SHARE (retrieval.ConfirmedShare)", "answerable confirmed on the expected procedure: grounded; negatives confirmed on their primary: grounded", m.Confirmed},
		{"HALF_HELD_SHARE (retrieval.HalfHeldShare)", "answerable not grounded, primary right: offered a clarification and grounded once confirmed; negatives offered one", m.HalfHeld},
	} {
		fmt.Fprintf(w, "  %s: %s (negatives at most %.0f %%)\n", x.name, x.what, 100*x.fit.Limit)
		for _, r := range x.fit.Rows {
			marks := x.fit.marks(r.Share)
			fmt.Fprintf(w, "    share %.2f: answerable %5.1f %% of %d, negatives %5.1f %% of %d%s\n", r.Share,
				100*r.AnswerableRate, r.Answerable, 100*r.NegativesRate, r.Negatives, marks)
		}
		for _, r := range x.fit.Holdout {
			fmt.Fprintf(w, "    holdout at %.2f: answerable %5.1f %% of %d, negatives %5.1f %% of %d\n", r.Share,
				100*r.AnswerableRate, r.Answerable, 100*r.NegativesRate, r.Negatives)
		}
	}
}
