package main

import (
	"math"
	"slices"
	"testing"
)

// outcomes builds counts from labelled outcomes: each entry is (expect, grounded, primary).
func tally(t *testing.T, cases ...[3]string) counts {
	t.Helper()
	var c counts
	for _, k := range cases {
		c.add(k[0], judge(k[1] == "grounded", k[2], k[0]))
	}
	return c
}

func TestCountsAndRates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cases [][3]string
		want  counts
		// precision, recall, wrong rate, negatives rate; -1 means undefined.
		precision, recall, wrong, negatives float64
	}{
		{
			name: "right, wrong, missed and negatives",
			cases: [][3]string{
				{"damage-procedure", "grounded", "damage-procedure"},
				{"damage-procedure", "grounded", "damage-procedure"},
				{"access-failure", "grounded", "lost-and-found"}, // wrong procedure
				{"ev-charging", "insufficient", "ev-charging"},   // right procedure, not grounded
				{"ev-charging", "insufficient", ""},              // nothing found
				{"", "grounded", "fines-and-parking"},            // negative grounded
				{"", "insufficient", "fines-and-parking"},        // negative held back
				{"", "insufficient", ""},                         // negative, nothing found
			},
			want:      counts{Answerable: 5, Negatives: 3, Right: 2, Wrong: 1, NegativesGrounded: 1},
			precision: 2.0 / 4, recall: 2.0 / 5, wrong: 1.0 / 5, negatives: 1.0 / 3,
		},
		{
			name:      "nothing grounded: precision undefined",
			cases:     [][3]string{{"damage-procedure", "insufficient", "damage-procedure"}, {"", "insufficient", ""}},
			want:      counts{Answerable: 1, Negatives: 1},
			precision: -1, recall: 0, wrong: 0, negatives: 0,
		},
		{
			name:      "no negatives: their rate undefined",
			cases:     [][3]string{{"damage-procedure", "grounded", "damage-procedure"}},
			want:      counts{Answerable: 1, Right: 1},
			precision: 1, recall: 1, wrong: 0, negatives: -1,
		},
		{
			name:      "only negatives: recall undefined",
			cases:     [][3]string{{"", "grounded", "damage-procedure"}},
			want:      counts{Negatives: 1, NegativesGrounded: 1},
			precision: 0, recall: -1, wrong: -1, negatives: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := tally(t, tt.cases...)
			if c != tt.want {
				t.Fatalf("counts %+v, want %+v", c, tt.want)
			}
			if c.N() != len(tt.cases) {
				t.Errorf("N %d, want %d", c.N(), len(tt.cases))
			}
			for _, r := range []struct {
				name string
				want float64
				got  func() (float64, bool)
			}{
				{"precision", tt.precision, c.Precision}, {"recall", tt.recall, c.Recall},
				{"wrong", tt.wrong, c.WrongRate}, {"negatives", tt.negatives, c.NegativesRate},
			} {
				got, ok := r.got()
				switch {
				case r.want < 0 && ok:
					t.Errorf("%s %v, want undefined", r.name, got)
				case r.want >= 0 && (!ok || math.Abs(got-r.want) > 1e-12):
					t.Errorf("%s %v (defined %v), want %v", r.name, got, ok, r.want)
				}
			}
		})
	}
}

func TestLimitsMeets(t *testing.T) {
	t.Parallel()
	l := limits{MaxWrong: 0.03, MaxNegatives: 0.05}
	tests := []struct {
		name string
		c    counts
		want bool
	}{
		{"exactly at both limits", counts{Answerable: 100, Negatives: 20, Right: 60, Wrong: 3, NegativesGrounded: 1}, true},
		{"one wrong too many", counts{Answerable: 100, Negatives: 20, Right: 60, Wrong: 4, NegativesGrounded: 1}, false},
		{"one negative too many", counts{Answerable: 100, Negatives: 20, Right: 60, Wrong: 3, NegativesGrounded: 2}, false},
		{"no negatives: only the wrong-grounded limit", counts{Answerable: 100, Right: 60, Wrong: 3}, true},
		{"no answerable questions: nothing to recommend", counts{Negatives: 20}, false},
		// 3 % of 7 is 0.21: a single wrong answer already exceeds it.
		{"small set", counts{Answerable: 7, Negatives: 3, Right: 5, Wrong: 1}, false},
	}
	for _, tt := range tests {
		if got := l.meets(tt.c); got != tt.want {
			t.Errorf("%s: meets %+v = %v, want %v", tt.name, tt.c, got, tt.want)
		}
	}
}

func r(g, s float64, right, wrong, neg int) row {
	return row{pair: pair{Grounded: g, Supported: s},
		counts: counts{Answerable: 100, Negatives: 20, Right: right, Wrong: wrong, NegativesGrounded: neg}}
}

func TestRecommend(t *testing.T) {
	t.Parallel()
	l := limits{MaxWrong: 0.03, MaxNegatives: 0.05}
	tests := []struct {
		name   string
		rows   []row
		want   pair
		wantOK bool
	}{
		{
			name: "the highest recall within the limits, not the highest overall",
			rows: []row{r(0.80, 0.70, 40, 0, 0), r(0.70, 0.60, 60, 2, 1), r(0.60, 0.50, 75, 5, 1), r(0.50, 0.40, 90, 9, 4)},
			want: pair{0.70, 0.60}, wantOK: true,
		},
		{
			name: "negatives decide",
			rows: []row{r(0.70, 0.60, 60, 2, 1), r(0.65, 0.55, 70, 3, 2)},
			want: pair{0.70, 0.60}, wantOK: true,
		},
		{
			name: "equal recall: fewer wrong-grounded",
			rows: []row{r(0.70, 0.50, 60, 3, 0), r(0.72, 0.60, 60, 1, 1)},
			want: pair{0.72, 0.60}, wantOK: true,
		},
		{
			name: "equal recall and wrong-grounded: fewer negatives grounded",
			rows: []row{r(0.75, 0.60, 60, 1, 1), r(0.70, 0.60, 60, 1, 0)},
			want: pair{0.70, 0.60}, wantOK: true,
		},
		{
			name: "the same counts: the higher pair",
			rows: []row{r(0.66, 0.56, 60, 1, 0), r(0.70, 0.50, 60, 1, 0), r(0.70, 0.60, 60, 1, 0), r(0.68, 0.60, 60, 1, 0)},
			want: pair{0.70, 0.60}, wantOK: true,
		},
		{
			name: "none within the limits",
			rows: []row{r(0.60, 0.50, 75, 5, 0), r(0.50, 0.40, 90, 9, 4)},
		},
	}
	for _, tt := range tests {
		got, ok := recommend(tt.rows, l)
		if ok != tt.wantOK || (ok && got.pair != tt.want) {
			t.Errorf("%s: recommend = %v %v, want %v %v", tt.name, got.pair, ok, tt.want, tt.wantOK)
		}
	}
	// Without a recommendation, the safest pair is the one with the fewest wrong-grounded.
	if got := safest(tests[len(tests)-1].rows); got.pair != (pair{0.60, 0.50}) {
		t.Errorf("safest = %v, want 0.60/0.50", got.pair)
	}
}

func TestFront(t *testing.T) {
	t.Parallel()
	rows := []row{
		r(0.80, 0.70, 40, 0, 0),
		r(0.78, 0.70, 40, 0, 0), // the same counts as 0.80/0.70: one row, the higher pair
		r(0.75, 0.70, 39, 1, 0), // dominated by 0.80/0.70
		r(0.70, 0.60, 60, 2, 1),
		r(0.69, 0.60, 60, 2, 2), // dominated by 0.70/0.60
		r(0.60, 0.50, 75, 5, 1),
		r(0.55, 0.50, 75, 4, 3), // fewer wrong, more negatives than 0.60/0.50: both stay
	}
	got := front(rows)
	var pairs []pair
	for _, x := range got {
		pairs = append(pairs, x.pair)
	}
	want := []pair{{0.80, 0.70}, {0.70, 0.60}, {0.60, 0.50}, {0.55, 0.50}}
	if !slices.Equal(pairs, want) {
		t.Errorf("front = %v, want %v", pairs, want)
	}
	// Thinning keeps the ends and every pair named.
	if th := thin(got, 2, pair{0.70, 0.60}); len(th) != 3 || th[0].pair != want[0] || th[1].pair != want[1] || th[2].pair != want[3] {
		t.Errorf("thin(2, keep 0.70/0.60) = %v", th)
	}
	if th := thin(got, 10); len(th) != len(got) {
		t.Errorf("thin(10) of %d rows kept %d", len(got), len(th))
	}
}

func TestGrid(t *testing.T) {
	t.Parallel()
	g, err := parseSteps("0.60:0.70:0.05")
	if err != nil {
		t.Fatal(err)
	}
	gap, err := parseSteps("0:0.1:0.1")
	if err != nil {
		t.Fatal(err)
	}
	got := grid(g, gap, pair{0.65, 0.55})
	want := []pair{{0.65, 0.55}, {0.60, 0.60}, {0.60, 0.50}, {0.65, 0.65}, {0.70, 0.70}, {0.70, 0.60}}
	if !slices.Equal(got, want) {
		t.Errorf("grid = %v, want %v (the configured pair first and once, values rounded)", got, want)
	}
	// A step that floating point would not land on exactly still reaches the end.
	if vs := (steps{From: 0.3, To: 0.9, Step: 0.01}).values(); len(vs) != 61 || vs[60] != 0.9 || vs[10] != 0.4 {
		t.Errorf("0.30:0.90:0.01 has %d values, last %v", len(vs), vs[len(vs)-1])
	}
	for _, bad := range []string{"0.5:0.9", "0.9:0.5:0.01", "0.5:0.9:0", "a:0.9:0.01", "0.5:1.5:0.1", "NaN:0.9:0.1"} {
		if _, err := parseSteps(bad); err == nil {
			t.Errorf("parseSteps(%q) accepted", bad)
		}
	}
}

func TestEdges(t *testing.T) {
	t.Parallel()
	grounded := steps{From: 0.30, To: 0.90, Step: 0.01}
	gap := steps{From: 0, To: 0.20, Step: 0.05}
	tests := []struct {
		p    pair
		want int
		what string
	}{
		{pair{0.67, 0.47}, 1, "the widest gap"},
		{pair{0.67, 0.52}, 0, "inside the grid"},
		{pair{0.30, 0.25}, 1, "the lowest grounded threshold"},
		{pair{0.30, 0.10}, 2, "both"},
		{pair{0.20, 0.00}, 1, "supported 0 cannot go lower"},
		{pair{0.90, 0.90}, 0, "the upper ends hide nothing better"},
	}
	for _, tt := range tests {
		if got := edges(tt.p, grounded, gap); len(got) != tt.want {
			t.Errorf("%s: edges(%v) = %q, want %d", tt.what, tt.p, got, tt.want)
		}
	}
}
