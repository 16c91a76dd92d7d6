// Package systems builds the systems the benchmarks compare over one corpus, each behind the
// same small interface, and loads the evaluation questions they are asked:
//
//   - Project: the lookup service exactly as the lookup function builds it (lexical.Build, the
//     demo BM25 provider, the in-memory trace store, the default options) and asked through
//     Service.Lookup: analysis, L0, BM25, fusion, relevance, evidence and the trace write.
//   - Lexical: the project's BM25 alone over the same index (Lang.Search on the question's
//     terms), the part of a lookup that compares with a search library.
//   - Bleve: bleve v2 with a scorch index on disk and BM25 scoring, one index per language (so
//     that document counts and average lengths are the language's, as in the project), one
//     document per section passage holding what the project indexes for a passage (title,
//     heading, content, keywords) in one text field with bleve's "en" or "de" analyzer, asked
//     with a match query on the question.
//
// Each answers with the procedure ids of its first five results, best first.
package systems

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/blevesearch/bleve/v2"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/de" // registers the "de" analyzer
	_ "github.com/blevesearch/bleve/v2/analysis/lang/en" // registers the "en" analyzer
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/northstar-mobility/mobilityops-knowledge/eval"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// TopK is how many results every system is asked for, as a lookup asks for five blocks.
const TopK = 5

// Answer is a system's answer to one question: the procedure ids of its results, best first
// (a procedure appears once per result, so it may appear more than once), and the primary
// procedure ("" when there is none).
type Answer struct {
	Primary string
	IDs     []string
}

// System is one system under comparison.
type System interface {
	Name() string
	Ask(ctx context.Context, lang, question string) (Answer, error)
}

// Project is the lookup service as a function builds it.
type Project struct {
	Index *lexical.Index
	svc   *retrieval.Service
}

// NewProject builds the index and the lookup service over c, as a function's cold start does.
func NewProject(c *knowledge.Corpus) *Project { return ProjectOf(lexical.Build(c)) }

// ProjectOf is the lookup service over an index already built or loaded: the demo provider, the
// in-memory store, the default options.
func ProjectOf(ix *lexical.Index) *Project {
	svc := retrieval.New(ix, demo.New(ix), store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	return &Project{Index: ix, svc: svc}
}

// Name implements System.
func (p *Project) Name() string { return "project" }

// Ask implements System with one lookup, as POST /lookup asks it.
func (p *Project) Ask(ctx context.Context, lang, question string) (Answer, error) {
	res, err := p.Lookup(ctx, lang, question)
	if err != nil {
		return Answer{}, err
	}
	a := Answer{IDs: make([]string, 0, len(res.EvidenceBlocks))}
	if res.Primary != nil {
		a.Primary = res.Primary.DocumentID
	}
	for _, b := range res.EvidenceBlocks {
		a.IDs = append(a.IDs, b.DocumentID)
	}
	return a, nil
}

// Lookup is the whole lookup result of the question that Ask reduces to an Answer.
func (p *Project) Lookup(ctx context.Context, lang, question string) (lookup.Result, error) {
	return p.svc.Lookup(ctx, lookup.LookupRequest{Question: question, Language: lang, TopK: TopK, Actor: port.Actor{ID: "bench"}})
}

// Lexical is the project's BM25 alone, over a Project's index.
type Lexical struct{ ix *lexical.Index }

// NewLexical returns the BM25 search of ix.
func NewLexical(ix *lexical.Index) *Lexical { return &Lexical{ix: ix} }

// Name implements System.
func (l *Lexical) Name() string { return "project-bm25" }

// Ask implements System: the question's terms (the question analyser, synonyms included), BM25
// over every passage of the language, the best five.
func (l *Lexical) Ask(_ context.Context, lang, question string) (Answer, error) {
	ll := l.ix.Lang(lang)
	if ll == nil {
		return Answer{}, fmt.Errorf("language %q: %w", lang, domain.ErrUnsupportedLanguage)
	}
	hits := ll.Search(ll.Analyzer.QuestionTerms(question), "", TopK)
	a := Answer{IDs: make([]string, 0, len(hits))}
	for _, h := range hits {
		d, _ := ll.Doc(h.Passage)
		a.IDs = append(a.IDs, d.ID)
	}
	if len(a.IDs) > 0 {
		a.Primary = a.IDs[0]
	}
	return a, nil
}

// textField is the one indexed field of a bleve passage document.
const textField = "text"

// Bleve is one scorch index per language.
type Bleve struct {
	langs map[string]bleve.Index
}

// NewBleve indexes every section passage of c into one scorch index per language under dir,
// which must be empty or absent. It returns when every passage is searchable and persisted
// (scorch's default: a batch waits for its segment to be written).
func NewBleve(c *knowledge.Corpus, dir string) (*Bleve, error) {
	b := &Bleve{langs: map[string]bleve.Index{}}
	for _, lang := range knowledge.Languages {
		idx, err := bleve.NewUsing(filepath.Join(dir, lang), indexMapping(lang), scorch.Name, scorch.Name, nil)
		if err != nil {
			b.Close()
			return nil, fmt.Errorf("bleve %s: %w", lang, err)
		}
		b.langs[lang] = idx
		batch := idx.NewBatch()
		for _, d := range c.Documents(lang) {
			meta := strings.Join(d.Keywords, "\n")
			for _, s := range d.Sections {
				// The passage text the project indexes: breadcrumb, content, keywords.
				doc := map[string]any{textField: d.Title + "\n" + s.Heading + "\n" + s.Content + "\n" + meta}
				if err := batch.Index(d.ID+"#"+s.Anchor, doc); err != nil {
					b.Close()
					return nil, fmt.Errorf("bleve %s: %s: %w", lang, d.ID, err)
				}
			}
		}
		if err := idx.Batch(batch); err != nil {
			b.Close()
			return nil, fmt.Errorf("bleve %s: %w", lang, err)
		}
	}
	return b, nil
}

// indexMapping is a static mapping of one text field analysed with the language's analyzer and
// scored with BM25, and nothing else indexed: no _all field, no stored values, no term vectors
// and no doc values, since a match query returning ids needs none of them.
func indexMapping(lang string) *mapping.IndexMappingImpl {
	text := bleve.NewTextFieldMapping()
	text.Analyzer = lang
	text.Store = false
	text.IncludeInAll = false
	text.IncludeTermVectors = false
	text.DocValues = false
	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt(textField, text)
	m := bleve.NewIndexMapping()
	m.DefaultMapping = doc
	m.DefaultAnalyzer = lang
	m.ScoringModel = index.BM25Scoring
	m.StoreDynamic = false
	m.IndexDynamic = false
	m.DocValuesDynamic = false
	return m
}

// Name implements System.
func (b *Bleve) Name() string { return "bleve" }

// Ask implements System with a match query (the question analysed by the field's analyzer, its
// terms OR-ed) for the best five passages.
func (b *Bleve) Ask(ctx context.Context, lang, question string) (Answer, error) {
	idx := b.langs[lang]
	if idx == nil {
		return Answer{}, fmt.Errorf("language %q: %w", lang, domain.ErrUnsupportedLanguage)
	}
	q := bleve.NewMatchQuery(question)
	q.SetField(textField)
	res, err := idx.SearchInContext(ctx, bleve.NewSearchRequestOptions(q, TopK, 0, false))
	if err != nil {
		return Answer{}, err
	}
	a := Answer{IDs: make([]string, 0, len(res.Hits))}
	for _, h := range res.Hits {
		id, _, _ := strings.Cut(h.ID, "#")
		a.IDs = append(a.IDs, id)
	}
	if len(a.IDs) > 0 {
		a.Primary = a.IDs[0]
	}
	return a, nil
}

// Close closes every index.
func (b *Bleve) Close() error {
	var first error
	for _, idx := range b.langs {
		if err := idx.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Accuracy is how often a system's primary result (top-1) and one of its first three results
// (top-3) are the expected procedure, over the answerable questions.
type Accuracy struct {
	Questions, Top1, Top3 int
}

// Top1Rate is the top-1 share.
func (a Accuracy) Top1Rate() float64 { return rate(a.Top1, a.Questions) }

// Top3Rate is the top-3 share.
func (a Accuracy) Top3Rate() float64 { return rate(a.Top3, a.Questions) }

func rate(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// Score adds one answer to a question to the tally; questions no procedure answers are not
// counted.
func (a *Accuracy) Score(q eval.Question, ans Answer) {
	if q.Kind != eval.KindAnswerable {
		return
	}
	a.Questions++
	if ans.Primary == q.Expect {
		a.Top1++
	}
	for i, id := range ans.IDs {
		if i < 3 && id == q.Expect {
			a.Top3++
			break
		}
	}
}
