package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// pair is one setting of L1_GROUNDED_COSINE and L1_SUPPORTED_COSINE.
type pair struct {
	Grounded  float64 `json:"grounded"`
	Supported float64 `json:"supported"`
}

func (p pair) String() string {
	return strconv.FormatFloat(p.Grounded, 'f', 2, 64) + "/" + strconv.FormatFloat(p.Supported, 'f', 2, 64)
}

// counts are the outcomes of one setting over the questions measured.
type counts struct {
	// Answerable questions expect a procedure; Negatives expect none.
	Answerable int `json:"answerable"`
	Negatives  int `json:"negatives"`
	// Right: answerable questions grounded on the expected procedure (the primary block's);
	// Wrong: answerable questions grounded on another; NegativesGrounded: negatives grounded.
	Right             int `json:"right_grounded"`
	Wrong             int `json:"wrong_grounded"`
	NegativesGrounded int `json:"negatives_grounded"`
}

// outcome is one lookup's verdict against its label.
type outcome uint8

const (
	notGrounded outcome = iota
	groundedRight
	groundedWrong // on another procedure than the expected one, or on any for a negative
)

// judge is the outcome of a lookup answering state on primary, for a question expecting expect
// ("" for none).
func judge(grounded bool, primary, expect string) outcome {
	switch {
	case !grounded:
		return notGrounded
	case expect != "" && primary == expect:
		return groundedRight
	}
	return groundedWrong
}

// add counts one question's outcome.
func (c *counts) add(expect string, o outcome) {
	if expect == "" {
		c.Negatives++
		if o != notGrounded {
			c.NegativesGrounded++
		}
		return
	}
	c.Answerable++
	switch o {
	case groundedRight:
		c.Right++
	case groundedWrong:
		c.Wrong++
	}
}

// AllGrounded is every grounded answer, on the right procedure or not.
func (c counts) AllGrounded() int { return c.Right + c.Wrong + c.NegativesGrounded }

// N is the number of questions measured.
func (c counts) N() int { return c.Answerable + c.Negatives }

// Precision is the share of grounded answers whose primary procedure is the expected one; not ok
// when nothing was grounded.
func (c counts) Precision() (float64, bool) { return share(c.Right, c.AllGrounded()) }

// Recall is the share of answerable questions grounded on the expected procedure.
func (c counts) Recall() (float64, bool) { return share(c.Right, c.Answerable) }

// WrongRate is the share of answerable questions grounded on another procedure.
func (c counts) WrongRate() (float64, bool) { return share(c.Wrong, c.Answerable) }

// NegativesRate is the share of the questions no procedure answers that were grounded.
func (c counts) NegativesRate() (float64, bool) { return share(c.NegativesGrounded, c.Negatives) }

func share(a, b int) (float64, bool) {
	if b == 0 {
		return 0, false
	}
	return float64(a) / float64(b), true
}

// limits are what a recommended pair must not exceed.
type limits struct {
	// MaxWrong bounds the wrong-grounded rate (of answerable questions), MaxNegatives the share
	// of negatives grounded.
	MaxWrong     float64 `json:"max_wrong_grounded"`
	MaxNegatives float64 `json:"max_negatives_grounded"`
}

// rule says in words how recommend chooses.
func (l limits) rule() string {
	return "of the pairs whose wrong-grounded rate is at most " + percent(l.MaxWrong) +
		" of the answerable questions and whose negatives grounded are at most " + percent(l.MaxNegatives) +
		" of the questions no procedure answers, the one with the highest recall; among equal recall, fewer " +
		"wrong-grounded, then fewer negatives grounded; among pairs with the same counts, the higher (more cautious) pair"
}

// meets reports whether c is within the limits. A set without negatives cannot exceed their limit;
// one without answerable questions recommends nothing (recall is undefined).
func (l limits) meets(c counts) bool {
	if c.Answerable == 0 {
		return false
	}
	// The rates are compared as counts, so that 3 of 100 is within 3 % whatever the rounding.
	return float64(c.Wrong) <= l.MaxWrong*float64(c.Answerable)+1e-9 &&
		(c.Negatives == 0 || float64(c.NegativesGrounded) <= l.MaxNegatives*float64(c.Negatives)+1e-9)
}

// row is one pair's outcome.
type row struct {
	pair
	counts
}

// better orders rows by the rule's preference: more right-grounded, fewer wrong-grounded, fewer
// negatives grounded, then the higher pair. It is negative when a is preferred.
func better(a, b row) int {
	return cmp.Or(
		cmp.Compare(b.Right, a.Right),
		cmp.Compare(a.Wrong, b.Wrong),
		cmp.Compare(a.NegativesGrounded, b.NegativesGrounded),
		cmp.Compare(b.Grounded, a.Grounded),
		cmp.Compare(b.Supported, a.Supported),
	)
}

// recommend picks the pair the rule prefers among those within the limits; ok is false when
// none is.
func recommend(rows []row, l limits) (best row, ok bool) {
	for _, r := range rows {
		if l.meets(r.counts) && (!ok || better(r, best) < 0) {
			best, ok = r, true
		}
	}
	return best, ok
}

// safest is the row with the fewest wrong-grounded answers, then the fewest negatives grounded,
// then the most right-grounded: what to look at when no pair is within the limits.
func safest(rows []row) row {
	return slices.MinFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.Wrong, b.Wrong), cmp.Compare(a.NegativesGrounded, b.NegativesGrounded), better(a, b))
	})
}

// dominates reports whether a is at least as good as b in right-grounded, wrong-grounded and
// negatives grounded, and better in one.
func dominates(a, b counts) bool {
	return a.Right >= b.Right && a.Wrong <= b.Wrong && a.NegativesGrounded <= b.NegativesGrounded &&
		(a.Right > b.Right || a.Wrong < b.Wrong || a.NegativesGrounded < b.NegativesGrounded)
}

// front is the Pareto front of rows, one row per distinct outcome (the higher pair of those with
// the same counts), by recall: every row that no other row beats on right-grounded, wrong-grounded
// and negatives grounded at once. Precision follows from those three.
func front(rows []row) []row {
	byCounts := map[counts]row{}
	for _, r := range rows {
		if kept, ok := byCounts[r.counts]; !ok || better(r, kept) < 0 {
			byCounts[r.counts] = r
		}
	}
	var out []row
	for _, r := range byCounts {
		dominated := false
		for _, o := range byCounts {
			if dominates(o.counts, r.counts) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.Right, b.Right), cmp.Compare(b.Wrong, a.Wrong),
			cmp.Compare(b.NegativesGrounded, a.NegativesGrounded), cmp.Compare(b.Grounded, a.Grounded), cmp.Compare(b.Supported, a.Supported))
	})
	return out
}

// thin keeps at most n rows of a front sorted by recall, evenly spread, always with the first and
// the last, and every row keep names.
func thin(rows []row, n int, keep ...pair) []row {
	if n <= 0 || len(rows) <= n {
		return rows
	}
	out := make([]row, 0, n+len(keep))
	for i, r := range rows {
		// Row i is kept when it is the first of its share of the n slots.
		picked := i == 0 || i == len(rows)-1 || i*(n-1)/(len(rows)-1) != (i-1)*(n-1)/(len(rows)-1)
		if picked || slices.Contains(keep, r.pair) {
			out = append(out, r)
		}
	}
	return out
}

// steps is a range of thresholds, "from:to:step".
type steps struct{ From, To, Step float64 }

func parseSteps(s string) (steps, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return steps{}, fmt.Errorf("%q: want from:to:step, as 0.50:0.90:0.01", s)
	}
	var v [3]float64
	for i, p := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f < 0 || f > 1 || math.IsNaN(f) {
			return steps{}, fmt.Errorf("%q: %q is not a number from 0 to 1", s, p)
		}
		v[i] = f
	}
	r := steps{From: v[0], To: v[1], Step: v[2]}
	switch {
	case r.Step < 0.001:
		return steps{}, fmt.Errorf("%q: the step must be at least 0.001", s)
	case r.From > r.To:
		return steps{}, fmt.Errorf("%q: from must not exceed to", s)
	}
	return r, nil
}

func (r steps) String() string {
	prec := 2
	if round4(r.Step*100) != math.Round(r.Step*100) {
		prec = 3
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', prec, 64) }
	return f(r.From) + ":" + f(r.To) + ":" + f(r.Step)
}

// values are the range's thresholds, rounded to four decimals so that 0.1+0.2 is 0.3.
func (r steps) values() []float64 {
	n := int(math.Floor((r.To-r.From)/r.Step + 1e-9))
	vs := make([]float64, 0, n+1)
	for i := 0; i <= n; i++ {
		vs = append(vs, round4(r.From+float64(i)*r.Step))
	}
	return vs
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// grid is every grounded threshold with each supported threshold gap below it (a gap of 0: no
// supported band), supported at least 0, and the configured pair; the configured pair first.
func grid(grounded, gap steps, configured pair) []pair {
	ps := []pair{configured}
	seen := map[pair]bool{configured: true}
	for _, g := range grounded.values() {
		for _, d := range gap.values() {
			p := pair{Grounded: g, Supported: round4(g - d)}
			if p.Supported >= 0 && !seen[p] {
				seen[p] = true
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// edges says which ends of the grid the recommended pair p sits on, where a pair the grid did not
// try could ground more within the limits: the lowest grounded threshold tried, or supported the
// widest gap below grounded (and still above 0). A higher pair grounds less, so the upper ends
// never hide a better one.
func edges(p pair, grounded, gap steps) []string {
	var out []string
	if vs := grounded.values(); len(vs) > 0 && p.Grounded <= vs[0] && p.Grounded > 0 {
		out = append(out, "L1_GROUNDED_COSINE "+strconv.FormatFloat(p.Grounded, 'f', 2, 64)+" is the lowest tried")
	}
	if ds := gap.values(); len(ds) > 0 && p.Supported > 0 && round4(p.Grounded-p.Supported) >= ds[len(ds)-1] {
		out = append(out, "L1_SUPPORTED_COSINE "+strconv.FormatFloat(p.Supported, 'f', 2, 64)+" is the widest gap tried below it")
	}
	return out
}

// percent formats a share as "3.0 %".
func percent(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) + " %" }
