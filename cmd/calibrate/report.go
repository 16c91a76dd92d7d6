package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// report is what a calibration found.
type report struct {
	Provider  string `json:"provider"`
	ScoreKind string `json:"score_kind"`
	// ThresholdsApply is false when the provider's L1 search is not semantic (the demo provider)
	// or L1 is off: then only the configured row is measured.
	ThresholdsApply bool         `json:"thresholds_apply"`
	Note            string       `json:"note,omitempty"`
	Sets            []setSummary `json:"sets"`
	// Questions are the questions used to choose, Failed those of them left out because their
	// retrieval failed, by error class in ErrorClasses.
	Questions    int    `json:"questions"`
	Failed       int    `json:"failed"`
	ErrorClasses string `json:"error_classes,omitempty"`
	// ProviderCalls is the number of distinct queries sent to the provider, each once.
	ProviderCalls int64  `json:"provider_calls"`
	Grounded      string `json:"grounded_grid,omitempty"`
	SupportedGap  string `json:"supported_gap_grid,omitempty"`
	Pairs         int    `json:"pairs"`
	Limits        limits `json:"limits"`
	Rule          string `json:"rule"`
	Configured    rowOut `json:"configured"`
	// Rows are the Pareto front's rows (thinned to -rows) with the configured and recommended ones.
	Rows []rowOut `json:"rows"`
	// Recommended is nil when no pair is within the limits; Safest is then the pair with the
	// fewest wrong-grounded answers.
	Recommended *rowOut `json:"recommended"`
	Safest      *rowOut `json:"safest,omitempty"`
	// Edges name the ends of the grid the recommended pair sits on, beyond which an untried pair
	// may do better; empty when it sits inside.
	Edges []string `json:"edges,omitempty"`
	// Holdout is the holdout sets' outcome at the configured and recommended pairs.
	Holdout *holdoutOut `json:"holdout,omitempty"`
	// Margins is the fit of the clarifying turn's margins on lexical evidence.
	Margins *marginsOut `json:"margins,omitempty"`
	// Tie is the fit of the semantic search's tie on the configured provider (absent when the
	// thresholds do not apply).
	Tie *tieFit `json:"tie,omitempty"`
}

// setSummary describes one set read.
type setSummary struct {
	Path       string `json:"path"`
	Holdout    bool   `json:"holdout"`
	Answerable int    `json:"answerable"`
	Negatives  int    `json:"negatives"`
}

// holdoutOut is the holdout sets' outcome.
type holdoutOut struct {
	Questions    int     `json:"questions"`
	Failed       int     `json:"failed"`
	ErrorClasses string  `json:"error_classes,omitempty"`
	Configured   rowOut  `json:"configured"`
	Recommended  *rowOut `json:"recommended,omitempty"`
}

// rowOut is a row as reported: the pair (absent when the thresholds do not apply), the counts
// and the rates, null where undefined (precision with nothing grounded, the negatives' rate of a
// set without negatives).
type rowOut struct {
	Grounded  *float64 `json:"grounded"`
	Supported *float64 `json:"supported"`
	counts
	Precision     *float64 `json:"precision"`
	Recall        *float64 `json:"recall"`
	WrongRate     *float64 `json:"wrong_grounded_rate"`
	NegativesRate *float64 `json:"negatives_grounded_rate"`
	N             int      `json:"n"`
	// Marks say which of the configured and the recommended pair this row is.
	Marks []string `json:"marks,omitempty"`
}

func rate(x float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	x = round4(x)
	return &x
}

func (c *calibration) rowOut(r row, thresholds bool, rec *row) rowOut {
	o := rowOut{counts: r.counts, N: r.N()}
	if thresholds {
		g, s := r.Grounded, r.Supported
		o.Grounded, o.Supported = &g, &s
	}
	o.Precision = rate(r.Precision())
	o.Recall = rate(r.Recall())
	o.WrongRate = rate(r.WrongRate())
	o.NegativesRate = rate(r.NegativesRate())
	if r.pair == c.configured {
		o.Marks = append(o.Marks, "configured")
	}
	if rec != nil && r.pair == rec.pair {
		o.Marks = append(o.Marks, "recommended")
	}
	return o
}

// run measures the sets: the ones to choose on at every pair of the grid (only the configured
// settings when the thresholds do not apply), the holdout sets at the configured and the
// recommended pair.
func (c *calibration) run(ctx context.Context, sets []set) (report, error) {
	p := c.parts.Provider
	rep := report{Provider: p.Name(), ScoreKind: p.ScoreKind(), ThresholdsApply: c.semantic(), Limits: c.opts.limits,
		Rule: c.opts.limits.rule()}
	var choose, hold []labelled
	rep.Sets, choose, hold = summarize(sets)
	pairs := c.pairs(&rep)
	rep.Pairs = len(pairs)
	m, err := c.lookups(ctx, choose, pairs)
	if err != nil {
		return rep, err
	}
	rep.Questions, rep.Failed, rep.ErrorClasses = len(choose), m.failures(), m.errorClasses()
	rows := make([]row, len(pairs))
	for i, pr := range pairs {
		rows[i] = row{pair: pr, counts: m.counts(i)}
	}
	var rec *row
	if r, ok := recommend(rows, c.opts.limits); ok && rep.ThresholdsApply {
		rec = &r
	}
	rep.Configured = c.rowOut(rows[0], rep.ThresholdsApply, rec)
	if rep.ThresholdsApply {
		c.gridRows(&rep, rows, rec)
	} else {
		rep.Rows = []rowOut{rep.Configured}
	}
	if len(hold) > 0 {
		if rep.Holdout, err = c.holdout(ctx, hold, rec, rep.ThresholdsApply); err != nil {
			return rep, err
		}
	}
	rep.ProviderCalls = c.provider.Calls()
	if c.parts.Index != nil {
		m, err := c.margins(ctx, choose, hold)
		if err != nil {
			return rep, fmt.Errorf("margins: %w", err)
		}
		rep.Margins = &m
	}
	if rep.ThresholdsApply {
		f, err := c.tie(ctx, choose, hold)
		if err != nil {
			return rep, fmt.Errorf("tie: %w", err)
		}
		rep.Tie = &f
	}
	return rep, nil
}

// summarize counts the answerable and negative questions of every set, and splits the questions
// into those to choose on and the holdout ones.
func summarize(sets []set) (sums []setSummary, choose, hold []labelled) {
	for _, s := range sets {
		sum := setSummary{Path: s.Path, Holdout: s.Holdout}
		for _, q := range s.Questions {
			if q.Expect == "" {
				sum.Negatives++
			} else {
				sum.Answerable++
			}
		}
		sums = append(sums, sum)
		if s.Holdout {
			hold = append(hold, s.Questions...)
		} else {
			choose = append(choose, s.Questions...)
		}
	}
	return sums, choose, hold
}

// pairs are the pairs to measure: the grid when the thresholds apply (named in rep), else the
// configured one alone (rep's note says why).
func (c *calibration) pairs(rep *report) []pair {
	if rep.ThresholdsApply {
		rep.Grounded, rep.SupportedGap = c.opts.grounded.String(), c.opts.gap.String()
		return grid(c.opts.grounded, c.opts.gap, c.configured)
	}
	p := c.parts.Provider
	rep.Note = "the provider " + p.Name() + " scores " + p.ScoreKind() + ", not a semantic cosine similarity"
	if !c.parts.Config.L1Enabled {
		rep.Note = "L1 is disabled (RETRIEVAL_L1_ENABLED=false)"
	}
	rep.Note += ": L1_GROUNDED_COSINE and L1_SUPPORTED_COSINE do not apply; the verdict is measured once, at the configured settings"
	return []pair{c.configured}
}

// gridRows reports the grid's rows (the Pareto front thinned, with the configured and recommended
// ones), and the recommended pair with the grid's edges it sits on, or the safest pair.
func (c *calibration) gridRows(rep *report, rows []row, rec *row) {
	shown := thin(front(rows), c.opts.rows)
	for _, r := range []row{rows[0], derefOr(rec, rows[0])} {
		if !slices.ContainsFunc(shown, func(s row) bool { return s.pair == r.pair }) {
			shown = append(shown, r)
		}
	}
	slices.SortFunc(shown, func(a, b row) int { return -better(a, b) })
	for _, r := range shown {
		rep.Rows = append(rep.Rows, c.rowOut(r, true, rec))
	}
	if rec != nil {
		o := c.rowOut(*rec, true, rec)
		rep.Recommended = &o
		rep.Edges = edges(rec.pair, c.opts.grounded, c.opts.gap)
	} else {
		o := c.rowOut(safest(rows), true, rec)
		rep.Safest = &o
	}
}

// holdout measures the holdout questions at the configured pair and at the recommended one.
func (c *calibration) holdout(ctx context.Context, hold []labelled, rec *row, thresholds bool) (*holdoutOut, error) {
	hp := []pair{c.configured}
	if rec != nil && rec.pair != c.configured {
		hp = append(hp, rec.pair)
	}
	hm, err := c.lookups(ctx, hold, hp)
	if err != nil {
		return nil, fmt.Errorf("holdout: %w", err)
	}
	h := &holdoutOut{Questions: len(hold), Failed: hm.failures(), ErrorClasses: hm.errorClasses(),
		Configured: c.rowOut(row{pair: c.configured, counts: hm.counts(0)}, thresholds, rec)}
	if rec != nil {
		i := len(hp) - 1
		o := c.rowOut(row{pair: hp[i], counts: hm.counts(i)}, true, rec)
		h.Recommended = &o
	}
	return h, nil
}

func derefOr(r *row, def row) row {
	if r == nil {
		return def
	}
	return *r
}

func (rep report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// writeText prints the report: what was measured, the table, the rule and the recommendation.
func (rep report) writeText(w io.Writer) error {
	var b strings.Builder
	answerable, negatives := 0, 0
	var choose, hold []string
	for _, s := range rep.Sets {
		if s.Holdout {
			hold = append(hold, s.Path)
			continue
		}
		choose = append(choose, s.Path)
		answerable += s.Answerable
		negatives += s.Negatives
	}
	fmt.Fprintf(&b, "provider %s (%s); %d questions from %s: %d answerable, %d that no procedure answers\n",
		rep.Provider, rep.ScoreKind, rep.Questions, plural(len(choose), "set"), answerable, negatives)
	if rep.Failed > 0 {
		fmt.Fprintf(&b, "left out: %s whose retrieval failed (%s)\n", plural(rep.Failed, "question"), rep.ErrorClasses)
	}
	if rep.ThresholdsApply {
		fmt.Fprintf(&b, "grid: L1_GROUNDED_COSINE %s, L1_SUPPORTED_COSINE %s below it: %d pairs\n",
			rep.Grounded, rep.SupportedGap, rep.Pairs)
	} else {
		b.WriteString(wrap(rep.Note+".", 100))
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "grounded\tsupported\tprecision\trecall\twrong-grounded\tnegatives grounded\tn\t\n"
	if !rep.ThresholdsApply {
		header = "\t\tprecision\trecall\twrong-grounded\tnegatives grounded\tn\t\n"
	}
	fmt.Fprint(tw, header)
	for _, r := range rep.Rows {
		fmt.Fprint(tw, r.line())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n")
	if rep.ThresholdsApply {
		rep.writeRecommendation(&b)
	}
	if err := rep.writeHoldout(&b, hold, header); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\nprovider calls: %d distinct queries, each sent once", rep.ProviderCalls)
	if rep.ThresholdsApply {
		b.WriteString("; every pair judged the same candidates")
	}
	b.WriteString("\n")
	if rep.Margins != nil {
		writeMargins(&b, *rep.Margins)
	}
	if rep.Tie != nil {
		writeTie(&b, *rep.Tie)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRecommendation prints the rule and the recommended pair, or the safest when none is
// within the limits.
func (rep report) writeRecommendation(b *strings.Builder) {
	b.WriteString(wrap("rule: "+rep.Rule+".", 100))
	switch {
	case rep.Recommended != nil:
		fmt.Fprintf(b, "recommended: L1_GROUNDED_COSINE=%s L1_SUPPORTED_COSINE=%s (configured: %s and %s)\n",
			num(*rep.Recommended.Grounded), num(*rep.Recommended.Supported),
			num(*rep.Configured.Grounded), num(*rep.Configured.Supported))
		if len(rep.Edges) > 0 {
			b.WriteString(wrap("The recommended pair is at the edge of the grid ("+strings.Join(rep.Edges, "; ")+
				"): a pair beyond it may ground more within the limits. Widen -grounded or -supported-gap and run again.", 100))
		}
	case rep.Safest != nil:
		fmt.Fprintf(b, "recommended: none; no pair of the grid is within the limits. The fewest wrong-grounded: %s/%s (%s); "+
			"keep the configured values and look at the retriever, the questions or the grid.\n",
			num(*rep.Safest.Grounded), num(*rep.Safest.Supported), strings.TrimSpace(cell(rep.Safest.WrongRate, rep.Safest.Wrong, rep.Safest.Answerable)))
	}
}

// writeHoldout prints the holdout sets' table (under header), if there are holdout sets.
func (rep report) writeHoldout(b *strings.Builder, hold []string, header string) error {
	h := rep.Holdout
	if h == nil {
		return nil
	}
	if rep.ThresholdsApply {
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "holdout, not used to choose (%s): %d questions", strings.Join(hold, ", "), h.Questions)
	if h.Failed > 0 {
		fmt.Fprintf(b, ", %d left out (%s)", h.Failed, h.ErrorClasses)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, header)
	fmt.Fprint(tw, h.Configured.line())
	if h.Recommended != nil && !slices.Contains(h.Configured.Marks, "recommended") {
		fmt.Fprint(tw, h.Recommended.line())
	}
	return tw.Flush()
}

// line is the row's table line.
func (r rowOut) line() string {
	g, s := "", ""
	if r.Grounded != nil {
		g, s = num(*r.Grounded), num(*r.Supported)
	}
	return strings.Join([]string{g, s, cell(r.Precision, r.Right, r.AllGrounded()), cell(r.Recall, r.Right, r.Answerable),
		cell(r.WrongRate, r.Wrong, r.Answerable), cell(r.NegativesRate, r.NegativesGrounded, r.Negatives),
		strconv.Itoa(r.N), ""}, "\t") + "  " + strings.Join(r.Marks, ", ") + "\n"
}

// cell is "61.2 % (510/833)", or "- (0/0)" when the rate is undefined.
func cell(x *float64, a, b int) string {
	v := "-"
	if x != nil {
		v = percent(*x)
	}
	return fmt.Sprintf("%s (%d/%d)", v, a, b)
}

// plural is "1 set", "2 sets".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func num(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

// wrap breaks text into lines of at most width characters.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(text) {
		if i > 0 && n+1+len(word) > width {
			b.WriteString("\n")
			n = 0
		} else if i > 0 {
			b.WriteString(" ")
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	b.WriteString("\n")
	return b.String()
}
