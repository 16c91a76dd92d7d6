package retrieval

import (
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// EvidenceBlock is one structured piece of evidence: a section of a procedure with provenance.
type EvidenceBlock struct {
	Source         string     `json:"source"`
	DocumentID     string     `json:"document_id"`
	Version        string     `json:"version"`
	EffectiveDate  string     `json:"effective_date"`
	Title          string     `json:"title"`
	Breadcrumb     string     `json:"breadcrumb"`
	Section        string     `json:"section"`
	Category       string     `json:"category"`
	RetrievalLayer string     `json:"retrieval_layer"`
	Content        string     `json:"content"`
	HitReasons     []string   `json:"hit_reasons"`
	Score          port.Score `json:"score"`
	Rank           int        `json:"rank"`
	// NextVersion announces the procedure's version taking effect within the upcoming window
	// after the day asked; nil when none does.
	NextVersion *NextVersion `json:"next_version,omitempty"`
	// Outdated marks a semantic candidate of another version than the one in force on the day
	// asked: returned after the evidence, never primary, never grounding (see versions.go).
	Outdated bool `json:"outdated,omitempty"`

	fusion   lookup.FusionBasis // how fusion ranked the block, for the trace
	l1       bool               // L1 returned the block
	l0Weight float64            // the L0 weight of the block's document, 0 when L0 did not match it
	// local tells that Content is the index's passage localPassage verbatim.
	local        bool
	localPassage int
}

// section returns the document and section of the index passage the block carries, nil when it
// carries none.
func (b *EvidenceBlock) section(l *lexical.Lang) (*knowledge.Document, *knowledge.Section) {
	if !b.local {
		return nil, nil
	}
	d, sec := l.Doc(b.localPassage)
	if b.Content != sec.Content {
		return nil, nil
	}
	return d, sec
}

// Relevance is the service's judgement of the evidence.
type Relevance struct {
	Assessment      string `json:"assessment"` // strong | weak | none
	SemanticSupport bool   `json:"semantic_support"`
	// Basis says which evidence the verdict weighed: "semantic+lexical" (the semantic candidates
	// with the local lexical search and the front matter), "semantic" (no section holds a word
	// of the question), "lexical" (the demo provider, or L1 down, empty or off) or "none".
	Basis string `json:"basis"`
	// Coverage is the share of the IDF weight of the question's known informative words that
	// the primary block holds.
	Coverage float64 `json:"coverage"`
	Reason   string  `json:"reason"`
	// Alternatives names the procedures competing with the primary block's when the evidence
	// paths disagree and none is decisive (the state is then insufficient); empty otherwise.
	Alternatives []Alternative `json:"alternatives,omitempty"`

	signals Signals
	// views and primaryDoc are what Signals describes the paths from, on demand.
	views      *[pathCount]pathView
	primaryDoc string
}

// Alternative is a procedure one evidence path favours over the primary block's: its best
// block's source and the paths that favour it.
type Alternative struct {
	DocumentID string   `json:"document_id"`
	Title      string   `json:"title"`
	Source     string   `json:"source"`
	FavouredBy []string `json:"favoured_by"`
}

// Evidence paths named in Alternative.FavouredBy.
const (
	PathSemantic    = "semantic"
	PathLexical     = "lexical"
	PathFrontMatter = "front_matter"
)

// Signals are the measurements an assessment decided on, kept for evaluation tools.
type Signals struct {
	// Support is the primary block's lexical support; Procedure that of its whole procedure;
	// FrontWeight the L0 weight of the procedure (0 when L0 did not match it); Points the
	// lexical evidence points (see LexicalMinPoints), 0 when a semantic score decided.
	Support     lexical.Support
	Procedure   lexical.Support
	FrontWeight float64
	Points      float64
	// Uncovered is the uncovered topic that made lexical evidence weak (zero when none did).
	Uncovered lexical.Uncovered
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
func (r Relevance) Signals() Signals {
	sg := r.signals
	if r.views != nil {
		sg.Paths = pathSignals(r.primaryDoc, r.views)
	}
	return sg
}

// Details is the "retrieval" object of a lookup response.
type Details struct {
	Layer           string           `json:"layer"`
	L0              lookup.L0Hints   `json:"l0"`
	L1              lookup.L1Details `json:"l1"`
	CandidateCount  int              `json:"candidate_count"`
	FinalBlockCount int              `json:"final_block_count"`
	// Sidecar is the comparison path's outcome: {"enabled": false, "status": "disabled"} unless
	// it is switched on. It never changes the fields above.
	Sidecar SidecarReport `json:"sidecar"`
}

// SidecarReport is the sidecar's part in a lookup response.
type SidecarReport struct {
	lookup.SidecarStatus
	ScoreKind string  `json:"score_kind,omitempty"`
	LatencyMs float64 `json:"latency_ms,omitempty"`
	// Results are the sidecar's comparable results (source, title, breadcrumb, category, rank,
	// preview, score with its label); the comparison (in SidecarStatus) compares them with the
	// evidence blocks by identity and rank only, never by score.
	Results []port.Comparable `json:"results,omitzero"`
}

// Result is the outcome of a lookup, shaped as the POST /lookup response.
type Result struct {
	EvidenceState  string          `json:"evidence_state"`
	Primary        *EvidenceBlock  `json:"primary"`
	Supplement     []EvidenceBlock `json:"supplement"`
	EvidenceBlocks []EvidenceBlock `json:"evidence_blocks"`
	Relevance      Relevance       `json:"relevance"`
	Retrieval      Details         `json:"retrieval"`
	Provider       string          `json:"provider"`
	InvocationID   string          `json:"invocation_id"`
	// Language is the language the question was answered in; LanguageDetected says that the
	// caller gave none and it was detected from the question. The API layer sets both.
	Language         string `json:"language"`
	LanguageDetected bool   `json:"language_detected"`
	// AsOf is the day whose procedure versions in force answered: the request's as_of, else
	// today in the configured time zone.
	AsOf string `json:"as_of"`
}

// NextVersion is a procedure's coming version: its version and the day it takes effect.
type NextVersion struct {
	Version       string `json:"version"`
	EffectiveDate string `json:"effective_date"`
}

// Answer is the outcome of an ask, shaped as the POST /ask response.
type Answer struct {
	Answer        string              `json:"answer"`
	EvidenceState string              `json:"evidence_state"`
	Sources       []port.AnswerSource `json:"sources"`
	Provider      string              `json:"provider"`
	// AnswerKind says how the text was made: "template" (extracted passages, nothing generated)
	// or "generated" (written by RAGcore from its citations).
	AnswerKind   string `json:"answer_kind"`
	InvocationID string `json:"invocation_id"`
	// Language and LanguageDetected are as in Result; the API layer sets both.
	Language         string `json:"language"`
	LanguageDetected bool   `json:"language_detected"`
	// AsOf is as in Result.
	AsOf string `json:"as_of"`
}
