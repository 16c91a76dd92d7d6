package main

import (
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
)

// tied is the signals of a lookup whose primary procedure is primary, strong on its own, that the
// semantic search ranks second to other by gap while the lexical search and the front matter are
// decisive for it.
func tied(primary, other string, gap float64) retrieval.Signals {
	return retrieval.Signals{Primary: primary, Base: true, Paths: map[string]retrieval.PathSignal{
		retrieval.PathSemantic:    {First: other, FirstScore: 0.78, Own: 0.78 - gap, Ranked: true, RunnerUp: other, RunnerUpScore: 0.78},
		retrieval.PathLexical:     {First: primary, FirstScore: 6, Own: 6, Ranked: true, RunnerUp: other, RunnerUpScore: 2},
		retrieval.PathFrontMatter: {First: primary, FirstScore: 3, Own: 3, Ranked: true},
	}}
}

// The tie's fit counts each tie's verdicts from the signals and recommends the tie that grounds
// the most answerable questions right without more negatives and with no more wrong ones than
// one in tieWrongSlack, the configured one among equals.
func TestFitTie(t *testing.T) {
	sigs := []tieSignals{
		{expect: "a", primary: "a", sig: tied("a", "b", 0.004)}, // right from 0.005
		{expect: "b", primary: "a", sig: tied("a", "b", 0.012)}, // wrong from 0.015
		{expect: "", primary: "c", sig: tied("c", "d", 0.025)},  // a negative grounded at 0.03
		{expect: "e", primary: "e", grounded: true, sig: retrieval.Signals{Primary: "e", Base: true}},
	}
	f := fitTie(sigs, sigs[:1], 0.01)
	want := map[float64][3]int{0: {1, 0, 0}, 0.005: {2, 0, 0}, 0.01: {2, 0, 0}, 0.015: {2, 1, 0}, 0.02: {2, 1, 0}, 0.03: {2, 1, 1}}
	for _, r := range f.Rows {
		if got := [3]int{r.Right, r.Wrong, r.NegativesGrounded}; got != want[r.Tie] {
			t.Errorf("tie %.3f: right, wrong, negatives grounded %v, want %v", r.Tie, got, want[r.Tie])
		}
	}
	if f.Recommended == nil || *f.Recommended != 0.01 {
		t.Errorf("recommended %v, want the configured 0.01 among the ties grounding as many", f.Recommended)
	}
	if g := fitTie(sigs, nil, 0.02); g.Recommended == nil || *g.Recommended != 0.005 {
		t.Errorf("configured 0.02, which grounds a wrong one: recommended %v, want 0.005", g.Recommended)
	}
	if len(f.Holdout) != 1 || f.Holdout[0].Right != 1 {
		t.Errorf("holdout %+v, want the configured tie's row with its question grounded", f.Holdout)
	}
}
