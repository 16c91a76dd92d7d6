package lookup

import "github.com/northstar-mobility/mobilityops-knowledge/shared/port"

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
	RetrievalLayer Layer      `json:"retrieval_layer"`
	Content        string     `json:"content"`
	HitReasons     []string   `json:"hit_reasons"`
	Score          port.Score `json:"score"`
	Rank           int        `json:"rank"`
	// NextVersion announces the procedure's version taking effect within the upcoming window
	// after the day asked; nil when none does.
	NextVersion *NextVersion `json:"next_version,omitempty"`
	// Outdated marks a semantic candidate of another version than the one in force on the day
	// asked: returned after the evidence, never primary, never grounding.
	Outdated bool `json:"outdated,omitempty"`
}

// NextVersion is a procedure's coming version: its version and the day it takes effect (the same
// shape on a lookup's blocks and an answer's sources).
type NextVersion = port.NextVersion

// Relevance is the service's judgement of the evidence.
type Relevance struct {
	Assessment      Assessment `json:"assessment"`
	SemanticSupport bool       `json:"semantic_support"`
	// Basis says which evidence the verdict weighed.
	Basis Basis `json:"basis"`
	// Coverage is the share of the IDF weight of the question's known informative words that
	// the primary block holds.
	Coverage float64 `json:"coverage"`
	Reason   string  `json:"reason"`
	// Alternatives names the procedures competing with the primary block's when the evidence
	// paths disagree and none is decisive (the state is then insufficient); empty otherwise, and
	// always for a question the procedures do not cover.
	Alternatives []Alternative `json:"alternatives,omitempty"`
	// Complements are the procedures that answer other parts of the question than the primary
	// block's procedure (a question with two needs); never offered as alternatives or in the
	// clarification. Empty when the question has one need.
	Complements []Complement `json:"complements,omitempty"`
	// Clarification is the question an agent relays to the operator when the answer is
	// insufficient but the procedures cover the question: which of its options applies. Nil
	// otherwise.
	Clarification *Clarification `json:"clarification,omitempty"`
}

// Complement is a procedure answering another part of the question: its best block's source
// (among the blocks within top_k), the question's words it covers that the primary block's
// procedure does not hold, and its own assessment (an agent acts on its block only when strong).
type Complement struct {
	DocumentID string     `json:"document_id"`
	Title      string     `json:"title"`
	Source     string     `json:"source"`
	Covers     []string   `json:"covers"`
	Assessment Assessment `json:"assessment"`
}

// Assessment is a judgement of the evidence (Relevance.Assessment, Complement.Assessment):
// strong evidence is grounded, weak evidence insufficient, and none is no evidence at all.
type Assessment string

// The assessments.
const (
	AssessmentStrong Assessment = "strong"
	AssessmentWeak   Assessment = "weak"
	AssessmentNone   Assessment = "none"
)

// Basis is the evidence a verdict weighed (Relevance.Basis).
type Basis string

// The bases: the semantic candidates with the local lexical search and the front matter; the
// semantic candidates alone (no section holds a word of the question); the lexical search (the
// demo provider, or L1 down, empty or off); none; and a lookup confined to the procedure the
// operator confirmed.
const (
	BasisBoth      Basis = "semantic+lexical"
	BasisSemantic  Basis = "semantic"
	BasisLexical   Basis = "lexical"
	BasisNone      Basis = "none"
	BasisConfirmed Basis = "confirmed"
)

// AnswerKind is how an answer's text was made (Answer.AnswerKind).
type AnswerKind string

// The answer kinds: extracted passages, nothing generated; written by RAGcore from its
// citations; no answer (the provider could not be asked).
const (
	AnswerTemplate  AnswerKind = "template"
	AnswerGenerated AnswerKind = "generated"
	AnswerNone      AnswerKind = "none"
)

// Clarification is a question in the request's language naming each situation the evidence
// points to, and the options it offers; an option's Procedure is the id an agent sends back as
// the request's procedure once the operator has chosen.
type Clarification struct {
	Question string   `json:"question"`
	Options  []Option `json:"options"`
}

// Option is one situation a clarification offers: its procedure id, title, and the situation in
// the words an operator knows (the title with the front-matter phrases the question matched).
type Option struct {
	Procedure string `json:"procedure"`
	Title     string `json:"title"`
	Situation string `json:"situation"`
}

// Alternative is a procedure one evidence path favours over the primary block's: its best
// block's source and the paths that favour it ("semantic", "lexical", "front_matter").
type Alternative struct {
	DocumentID string   `json:"document_id"`
	Title      string   `json:"title"`
	Source     string   `json:"source"`
	FavouredBy []string `json:"favoured_by"`
}

// Details is the "retrieval" object of a lookup response.
type Details struct {
	Layer           Layer     `json:"layer"`
	L0              L0Hints   `json:"l0"`
	L1              L1Details `json:"l1"`
	CandidateCount  int       `json:"candidate_count"`
	FinalBlockCount int       `json:"final_block_count"`
	// Sidecar is the comparison path's outcome: {"enabled": false, "status": "disabled"} unless
	// it is switched on. It never changes the fields above.
	Sidecar SidecarReport `json:"sidecar"`
}

// SidecarReport is the sidecar's part in a lookup response.
type SidecarReport struct {
	SidecarStatus
	ScoreKind string  `json:"score_kind,omitempty"`
	LatencyMs float64 `json:"latency_ms,omitempty"`
	// Results are the sidecar's comparable results (source, title, breadcrumb, category, rank,
	// preview, score with its label); the comparison (in SidecarStatus) compares them with the
	// evidence blocks by identity and rank only, never by score.
	Results []port.Comparable `json:"results,omitzero"`
}

// Result is the outcome of a lookup, shaped as the POST /lookup response.
type Result struct {
	EvidenceState  port.EvidenceState `json:"evidence_state"`
	Primary        *EvidenceBlock     `json:"primary"`
	Supplement     []EvidenceBlock    `json:"supplement"`
	EvidenceBlocks []EvidenceBlock    `json:"evidence_blocks"`
	Relevance      Relevance          `json:"relevance"`
	Retrieval      Details            `json:"retrieval"`
	Provider       string             `json:"provider"`
	InvocationID   string             `json:"invocation_id"`
	// Language is the language the question was answered in; LanguageDetected says that the
	// caller gave none and it was detected from the question. The API layer sets both.
	Language         string `json:"language"`
	LanguageDetected bool   `json:"language_detected"`
	// AsOf is the day whose procedure versions in force answered: the request's as_of, else
	// today in the configured time zone.
	AsOf string `json:"as_of"`
	// Procedure echoes the request's procedure: the procedure the lookup was confined to.
	Procedure string `json:"procedure,omitempty"`
}

// Answer is the outcome of an ask, shaped as the POST /ask response.
type Answer struct {
	Answer        string              `json:"answer"`
	EvidenceState port.EvidenceState  `json:"evidence_state"`
	Sources       []port.AnswerSource `json:"sources"`
	Provider      string              `json:"provider"`
	// AnswerKind says how the text was made.
	AnswerKind   AnswerKind `json:"answer_kind"`
	InvocationID string     `json:"invocation_id"`
	// Language and LanguageDetected are as in Result; the API layer sets both.
	Language         string `json:"language"`
	LanguageDetected bool   `json:"language_detected"`
	// AsOf and Procedure are as in Result.
	AsOf      string `json:"as_of"`
	Procedure string `json:"procedure,omitempty"`
	// Relevance is the lookup's judgement the answer stands on (its alternatives and
	// clarification), so that an agent can run the clarifying turn from an ask alone.
	Relevance *Relevance `json:"relevance,omitempty"`
}
