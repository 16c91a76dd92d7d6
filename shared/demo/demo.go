// Package demo is DemoKnowledgeProvider: deterministic BM25 over the procedures' section passages,
// for running everything without RAGcore. It is a resilience and test adapter, not a second RAG
// platform: it returns extracted passages and a template summary, never generated text.
package demo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/judge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// Provider is the demo knowledge provider.
type Provider struct {
	ix *lexical.Index
	// epochs, when set, holds the index of each set of versions in force: Retrieve searches
	// the one of the query's day (port.Query.AsOf).
	epochs *lexical.Epochs
	corpus *knowledge.Corpus // for verification alone, when ix is nil (see ForCorpus)
}

var (
	_ port.Retriever      = (*Provider)(nil)
	_ port.Answerer       = (*Provider)(nil)
	_ port.ManifestSyncer = (*Provider)(nil)
	_ port.HealthChecker  = (*Provider)(nil)
)

// New returns a demo provider over an analysed corpus.
func New(ix *lexical.Index) *Provider { return &Provider{ix: ix} }

// WithEpochs makes Retrieve search the versions in force on the query's day, as the lookup
// service does: the provider's candidates and the service's L0 come from the same epoch.
func WithEpochs(e *lexical.Epochs) *Provider {
	if e.Corpus() == nil { // one index whatever the day
		return New(e.At("").Index)
	}
	return &Provider{epochs: e, corpus: e.Corpus()}
}

// ForCorpus returns a demo provider for the functions that verify sources and sync manifests
// but answer no question (status, manifest sync), so that they need not load the analysed
// index: its Retrieve and Ask fail with ErrNoIndex.
func ForCorpus(c *knowledge.Corpus) *Provider { return &Provider{corpus: c} }

// ErrNoIndex is returned by Retrieve and Ask of a provider made by ForCorpus.
var ErrNoIndex = errors.New("demo provider: this function has no analysed index")

// Name implements port.Named.
func (p *Provider) Name() string { return "demo" }

// Semantic implements port.Retriever: BM25 is lexical.
func (p *Provider) Semantic() bool { return false }

// InProcess returns p, whose every call runs in the caller's goroutine without I/O, reading its
// context only on entry: the lookup service sets it no deadline (retrieval.InProcess).
func (p *Provider) InProcess() any { return p }

// ScoreKind implements port.Retriever.
func (p *Provider) ScoreKind() string { return "bm25" }

// Health implements port.HealthChecker: the embedded corpus is always there.
func (p *Provider) Health(context.Context, port.Call) port.Health {
	return port.Health{Status: domain.HealthOK, Detail: "deterministic BM25 over the loaded procedures"}
}

// Retrieve implements port.Retriever with BM25 over section passages.
func (p *Provider) Retrieve(ctx context.Context, q port.Query) ([]port.Candidate, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ix := p.ix
	if p.epochs != nil && q.AsOf != "" {
		ix = p.epochs.At(q.AsOf).Index
	}
	if ix == nil {
		return nil, ErrNoIndex
	}
	l := ix.Lang(q.Language)
	if l == nil {
		return nil, domain.ErrUnsupportedLanguage
	}
	terms := q.Terms
	if terms == nil {
		terms = l.Analyzer.QuestionTerms(q.Question)
	}
	// BM25, then within the hits a passage stating the question's words in one sentence, and a
	// fact of the kind asked, comes first (judge.Focus): the deciding section before one that
	// lists them.
	var hits []lexical.Hit
	if q.Procedure != "" {
		hits = judge.SearchFocusedIn(l, terms, q.TermWeights, l.DocIndex(q.Procedure), q.TopK, textproc.QuestionKinds(q.Question))
	} else {
		hits = judge.SearchFocused(l, terms, q.TermWeights, q.Category, q.TopK, textproc.QuestionKinds(q.Question))
	}
	return judge.Candidates(l, hits, q.Buffer[:0]), nil // a fresh array when the caller lends none
}

// Ask implements port.Answerer with a template over the lookup's evidence
// (AskQuery.Evidence: the same ranked blocks POST /lookup returns, with their excerpts) and its
// evidence state, so that /ask and /lookup never disagree. Nothing is generated: the answer lists
// the extracted passages and says plainly when they do not clearly cover the question.
func (p *Provider) Ask(ctx context.Context, q port.AskQuery) (port.GroundedAnswer, error) {
	if err := ctx.Err(); err != nil {
		return port.GroundedAnswer{}, err
	}
	switch {
	case p.epochs != nil:
		if !slices.Contains(knowledge.Languages, q.Language) {
			return port.GroundedAnswer{}, domain.ErrUnsupportedLanguage
		}
	case p.ix == nil:
		return port.GroundedAnswer{}, ErrNoIndex
	case p.ix.Lang(q.Language) == nil:
		return port.GroundedAnswer{}, domain.ErrUnsupportedLanguage
	}
	w := wordingOf(q.Language)
	if len(q.Evidence) == 0 {
		return port.GroundedAnswer{Answer: w.none, EvidenceState: port.StateInsufficient, Sources: []port.AnswerSource{}}, nil
	}
	state := port.StateInsufficient
	var b strings.Builder
	if q.EvidenceState == port.StateGrounded {
		state = port.StateGrounded
		fmt.Fprintf(&b, w.grounded, len(q.Evidence))
	} else {
		b.WriteString(w.unclear)
	}
	sources := make([]port.AnswerSource, 0, len(q.Evidence))
	for i, e := range q.Evidence {
		d := e.Block
		fmt.Fprintf(&b, w.passage, i+1, d.Title, d.Version, d.Section, e.Excerpt)
		sources = append(sources, port.AnswerSource{DocumentID: d.DocumentID, Title: d.Title, Version: d.Version,
			Section: d.Section, Excerpt: e.Excerpt})
	}
	return port.GroundedAnswer{Answer: b.String(), EvidenceState: state, Sources: sources}, nil
}

// wording is the template of an answer in one language: the procedures answer in the language
// asked, and so does the template around their passages.
type wording struct {
	none     string // no passage matches
	grounded string // %d passages, grounded
	unclear  string // passages that do not clearly cover the question
	passage  string // [n] title (version v), section: excerpt
}

var wordings = map[string]wording{
	"en": {
		none: "No procedure passage matches this question, so no answer is given. " +
			"This is a template from the demo provider, not generated text.",
		grounded: "Extracted from %d procedure passage(s) by the demo provider (template summary, not generated text). " +
			"Follow the cited procedure:",
		unclear: "The procedures do not clearly cover this question; no procedure is inferred. " +
			"Closest passages, extracted by the demo provider (template summary, not generated text):",
		passage: "\n[%d] %s (version %s), %s: %s",
	},
	"de": {
		none: "Kein Verfahrensabschnitt passt zu dieser Frage, daher wird keine Antwort gegeben. " +
			"Dies ist eine Vorlage des Demo-Anbieters, kein generierter Text.",
		grounded: "Vom Demo-Anbieter aus %d Verfahrensabschnitt(en) entnommen (Vorlage, kein generierter Text). " +
			"Bitte dem genannten Verfahren folgen:",
		unclear: "Die Verfahren decken diese Frage nicht eindeutig ab; es wird kein Verfahren abgeleitet. " +
			"Nächstliegende Abschnitte, entnommen vom Demo-Anbieter (Vorlage, kein generierter Text):",
		passage: "\n[%d] %s (Version %s), %s: %s",
	},
}

// wordingOf is the template of a language, English for one without its own.
func wordingOf(lang string) wording {
	if w, ok := wordings[lang]; ok {
		return w
	}
	return wordings["en"]
}

var _ port.Verifier = (*Provider)(nil)

// VerifySource implements port.Verifier: a source is indexed when the procedures the demo
// provider serves hold it (its index's documents, or the corpus of a provider made by
// ForCorpus): what it serves is what it reports indexed.
func (p *Provider) VerifySource(ctx context.Context, _ port.Call, lang, documentID string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if !slices.Contains(knowledge.Languages, lang) {
		return "", domain.ErrUnsupportedLanguage
	}
	held := false
	switch {
	case p.ix == nil:
		held = p.corpus.Versions(lang, documentID) != nil
	default:
		held = p.ix.Lang(lang).DocIndex(documentID) >= 0
	}
	if held {
		return port.SourceIndexed, nil
	}
	return "missing", nil
}

// SyncManifest implements port.ManifestSyncer. The demo provider reads the procedures
// directly, so there is nothing to upload; it counts the manifest and says so.
func (p *Provider) SyncManifest(ctx context.Context, _ port.Call, docs []port.DocumentRef) (port.SyncResult, error) {
	if err := ctx.Err(); err != nil {
		return port.SyncResult{}, err
	}
	return port.SyncResult{Documents: len(docs), Failed: []domain.SyncFailure{},
		Note: "the demo provider reads the procedures directly; nothing was uploaded"}, nil
}
