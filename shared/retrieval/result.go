package retrieval

import (
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/judge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
)

// ranked is an evidence block as fusion made it: the response's record with what the ranking
// knows of it and the response does not carry.
type ranked struct {
	*lookup.EvidenceBlock // the response's block

	fusion   lookup.FusionBasis // how fusion ranked the block, for the trace
	l1       bool               // L1 returned the block
	l0Weight float64            // the L0 weight of the block's document, 0 when L0 did not match it
	// local tells that Content is the index's passage localPassage verbatim.
	local        bool
	localPassage int
	// preview is previewOf clipped as a trace's summary carries it (see summaries).
	preview, previewOf string
}

// section returns the document and section of the index passage the block carries, nil when it
// carries none.
func (b *ranked) section(l *lexical.Lang) (*knowledge.Document, *knowledge.Section) {
	if !b.local {
		return nil, nil
	}
	d, sec := l.Doc(b.localPassage)
	if b.Content != sec.Content {
		return nil, nil
	}
	return d, sec
}

// judgement is the relevance the response carries with the measurements it was decided on.
type judgement struct {
	lookup.Relevance

	signals Signals
	// views and primaryDoc are what Signals describes the paths from, on demand.
	views      *pathViews
	primaryDoc string
	// lang is the language judged in; covered tells that the procedures cover a question judged
	// weak, so that its answer may offer a clarification.
	lang    string
	covered bool
}

// Signals are the measurements an assessment decided on, kept for evaluation tools.
type Signals struct {
	// Primary is the primary block's procedure, the one the signals speak of.
	Primary string
	// Support is the primary block's lexical support; Procedure that of its whole procedure;
	// FrontWeight the L0 weight of the procedure (0 when L0 did not match it); Points the
	// lexical evidence points (see LexicalMinPoints), 0 when a semantic score decided.
	Support     judge.Support
	Procedure   judge.Support
	FrontWeight float64
	Points      float64
	// Uncovered is the uncovered topic that made lexical evidence weak (zero when none did).
	Uncovered judge.Uncovered
	// Paths are the evidence paths' views of the primary block's procedure, by path name
	// (semantic, lexical, front_matter); absent for a path with nothing to say.
	Paths map[string]PathSignal
	// Base tells that the primary block's own evidence was strong before the paths were
	// weighed against each other.
	Base bool
}

// PathSignal is one evidence path's view: its favourite procedure and score, the primary
// block's procedure's own score there (Ranked false when the path does not rank it), and the
// best other procedure.
type PathSignal struct {
	First           string
	FirstScore, Own float64
	Ranked          bool
	RunnerUp        string
	RunnerUpScore   float64
}

// Signals returns the measurements the assessment decided on.
func (r judgement) Signals() Signals {
	sg := r.signals
	sg.Primary = r.primaryDoc
	if r.views != nil {
		sg.Paths = pathSignals(r.primaryDoc, r.views)
	}
	return sg
}

// outcome is a lookup as the service made it: the response, and the ranked blocks and the
// judgement it was made of.
type outcome struct {
	lookup.Result
	// blocks are the response's evidence blocks of the versions in force (the first of
	// EvidenceBlocks), as ranked.
	blocks    []ranked
	relevance judgement
	// views are the paths' rankings the judgement was made of, and ranked the array fusion made
	// the blocks in, both pooled: the caller releases them (release) once it read the
	// judgement's Signals and the trace is recorded, or leaves them to the collector.
	views  *pathViews
	ranked *rankedArray
}

// release gives the outcome's pooled arrays back; the outcome's blocks and Signals are not read
// after. The response (Result) holds neither.
func (o *outcome) release() {
	o.views.release()
	o.ranked.release()
	o.views, o.ranked, o.blocks = nil, nil, nil
}

// respond sets the response's primary block, supplement and relevance.
func (o *outcome) respond() {
	n := len(o.blocks)
	o.Supplement = []lookup.EvidenceBlock{}
	if n > 0 {
		o.Primary = &o.EvidenceBlocks[0]
		o.Supplement = o.EvidenceBlocks[1:n:n]
	}
	o.Relevance = o.relevance.Relevance
}
