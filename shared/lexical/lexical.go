// Package lexical is the analysed form of the corpus shared by the L0 keyword layer and the demo
// provider's BM25: per language, the terms of every section passage and of every document's front
// matter, and an inverted index scored with Lucene's BM25. It is built once per cold start and is
// read-only afterwards, so it is safe for concurrent use.
package lexical

import (
	"math"
	"slices"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/synonyms"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// BM25 parameters: Lucene's defaults.
const (
	K1 = 1.2
	B  = 0.75
)

// Index holds one Lang per corpus language.
type Index struct {
	langs map[string]*Lang
}

// Lang is the analysed corpus of one language.
type Lang struct {
	// Language is the language's code ("en", "de").
	Language string
	// Analyzer analyses questions: the index's analysis, plus synonyms and a compound splitter
	// that also knows the synonyms' words.
	Analyzer *textproc.Analyzer
	Docs     []*knowledge.Document
	// Front holds each document's analysed front matter, parallel to Docs.
	Front []Front
	// Passages are the sections of all documents, ordered by document id, then section number:
	// that order breaks score ties.
	Passages []Passage

	text     *textproc.Analyzer // the index's own analysis, for passage text
	postings map[string][]posting
	idf      map[string]float64    // per indexed term; unseen terms get unseenIDF
	docIDF   map[string]float64    // per indexed term, over procedures instead of passages
	docTerms []map[string]struct{} // per document, the terms of all its passages
	unseen   float64
	avgLen   float64
	byAnchor map[string]int // "<doc id>#<anchor>" -> passage
	// frontCats counts, per term, the categories whose documents' front matter holds it.
	frontCats map[string]int
	docStart  []int // first passage of each document, plus len(Passages) at the end
}

// Front is the analysed front matter of one document.
type Front struct {
	Title    []string   // distinct title words (stems)
	Keywords [][]string // one word list per keyword, parallel to Document.Keywords
	Entities [][]string // one word list per entity, parallel to Document.Entities
	Category []string   // terms of the category slug
	// Terms is every term of the front matter.
	Terms map[string]struct{}
}

// Passage is one section of one document.
type Passage struct {
	Doc     int // index into Lang.Docs
	Section int // index into Document.Sections
	Len     int // number of terms
	Terms   map[string]struct{}
}

type posting struct {
	passage int32
	tf      int32
}

// Build analyses the corpus.
func Build(c *knowledge.Corpus) *Index {
	ix := &Index{langs: map[string]*Lang{}}
	for _, lang := range knowledge.Languages {
		ix.langs[lang] = buildLang(lang, c.Documents(lang), c.Synonyms(lang))
	}
	return ix
}

// Lang returns the analysed corpus of lang, or nil for an unknown language.
func (ix *Index) Lang(lang string) *Lang { return ix.langs[lang] }

func buildLang(lang string, docs []*knowledge.Document, syns *synonyms.Set) *Lang {
	base := textproc.New(lang)
	matcher := syns.Compile(base.Tokens)
	a, q := base, base
	if lang == "de" {
		var texts []string
		for _, d := range docs {
			texts = append(texts, d.Title, strings.Join(d.Keywords, " "), strings.Join(d.Entities, " "))
			for _, s := range d.Sections {
				texts = append(texts, s.Heading, s.Content)
			}
		}
		// Compounds split against the synonyms' words as well, so that "Putzrechnung" gives
		// "putz" (a synonym of Reinigung) and "rechnung". Questions and the index split the
		// same way, so that a compound of the front matter matches the same compound asked.
		a = base.WithSplitter(textproc.NewSplitter(base, append(texts, splitVocabulary(syns, base)...)...))
		q = a
	}
	q = q.WithSynonyms(matcher)
	l := &Lang{Language: lang, Analyzer: q, text: a, Docs: docs, postings: map[string][]posting{}, byAnchor: map[string]int{}}
	total := 0
	for di, d := range docs {
		l.docStart = append(l.docStart, len(l.Passages))
		l.Front = append(l.Front, analyseFront(a, d))
		meta := strings.Join(d.Keywords, "\n")
		for si, s := range d.Sections {
			// A passage is indexed with its breadcrumb and its document's keywords, so that a
			// section is found by the procedure it belongs to as well as by its own words.
			terms := a.Terms(d.Title + "\n" + s.Heading + "\n" + s.Content + "\n" + meta)
			p := Passage{Doc: di, Section: si, Len: len(terms), Terms: set(terms)}
			tf := map[string]int32{}
			for _, t := range terms {
				tf[t]++
			}
			for t, n := range tf {
				l.postings[t] = append(l.postings[t], posting{passage: int32(len(l.Passages)), tf: n})
			}
			l.byAnchor[d.ID+"#"+s.Anchor] = len(l.Passages)
			l.Passages = append(l.Passages, p)
			total += len(terms)
		}
	}
	l.docStart = append(l.docStart, len(l.Passages))
	cats := map[string]map[string]bool{}
	for di, d := range docs {
		for t := range l.Front[di].Terms {
			if cats[t] == nil {
				cats[t] = map[string]bool{}
			}
			cats[t][d.Category] = true
		}
	}
	l.frontCats = make(map[string]int, len(cats))
	for t, c := range cats {
		l.frontCats[t] = len(c)
	}
	if len(l.Passages) > 0 {
		l.avgLen = float64(total) / float64(len(l.Passages))
	}
	// IDF depends only on the corpus: computed once here instead of on every lookup.
	N := float64(len(l.Passages))
	l.idf = make(map[string]float64, len(l.postings))
	for t, ps := range l.postings {
		l.idf[t] = bm25IDF(N, float64(len(ps)))
	}
	l.unseen = bm25IDF(N, 0)
	l.docTerms = make([]map[string]struct{}, len(docs))
	for di := range docs {
		terms := map[string]struct{}{}
		lo, hi := l.DocPassages(di)
		for pi := lo; pi < hi; pi++ {
			for t := range l.Passages[pi].Terms {
				terms[t] = struct{}{}
			}
		}
		l.docTerms[di] = terms
	}
	// Document frequency: in how many procedures a term occurs, for Support.Specific.
	l.docIDF = make(map[string]float64, len(l.postings))
	D := float64(len(docs))
	for t, ps := range l.postings {
		n, last := 0, -1
		for _, p := range ps {
			if d := l.Passages[p.passage].Doc; d != last {
				n, last = n+1, d
			}
		}
		l.docIDF[t] = bm25IDF(D, float64(n))
	}
	return l
}

func bm25IDF(N, n float64) float64 { return math.Log(1 + (N-n+0.5)/(n+0.5)) }

// splitVocabulary is the words of the hand-curated synonym files (operators.txt): the words
// operators write in compounds ("Putz", "Strom", "Tanke"). The generated thesaurus files add
// thousands of general words that would split the procedures' own compounds into noise.
func splitVocabulary(syns *synonyms.Set, a *textproc.Analyzer) []string {
	curated := syns.Select(func(r synonyms.Rule) bool { return strings.Contains(r.Source, "operators.txt") })
	return curated.Compile(a.Tokens).Vocabulary()
}

// DocPassages returns the passages of one document as the range [lo, hi).
func (l *Lang) DocPassages(doc int) (lo, hi int) { return l.docStart[doc], l.docStart[doc+1] }

func analyseFront(a *textproc.Analyzer, d *knowledge.Document) Front {
	f := Front{Terms: map[string]struct{}{}}
	// A phrase is its words' stems: a question holds the phrase when it holds those words, whole
	// or as a synonym's word. The compound parts of its words are front-matter terms too (for
	// partial matches), but a phrase never needs them.
	add := func(text string) []string {
		groups := a.Groups(text)
		for _, t := range textproc.Flatten(groups) {
			f.Terms[t] = struct{}{}
		}
		words := make([]string, 0, len(groups))
		for _, g := range groups {
			words = append(words, g.Term)
		}
		return unique(words)
	}
	f.Title = add(d.Title)
	for _, k := range d.Keywords {
		f.Keywords = append(f.Keywords, add(k))
	}
	for _, e := range d.Entities {
		f.Entities = append(f.Entities, add(e))
	}
	f.Category = add(strings.ReplaceAll(d.Category, "-", " "))
	return f
}

// FrontCategories is the number of categories whose documents' front matter holds term: 1 for a
// term that points to one domain, more for words every procedure uses ("customer", "vehicle").
func (l *Lang) FrontCategories(term string) int { return l.frontCats[term] }

// PassageOf returns the passage of a document's section, by section anchor.
func (l *Lang) PassageOf(docID, anchor string) (int, bool) {
	i, ok := l.byAnchor[docID+"#"+anchor]
	return i, ok
}

// Doc returns the document and section of a passage.
func (l *Lang) Doc(passage int) (*knowledge.Document, *knowledge.Section) {
	p := l.Passages[passage]
	d := l.Docs[p.Doc]
	return d, &d.Sections[p.Section]
}

// IDF is Lucene's BM25 idf, log(1 + (N - n + 0.5) / (n + 0.5)): never negative, and largest for
// a term that no passage contains.
func (l *Lang) IDF(term string) float64 {
	if w, ok := l.idf[term]; ok {
		return w
	}
	return l.unseen
}

// Hit is one scored passage.
type Hit struct {
	Passage int
	Score   float64
}

// Search scores passages against the query terms with BM25 (Lucene's form:
// idf * tf / (tf + k1 * (1 - b + b * len/avglen))) and returns the best topK, highest score
// first, ties broken by document id, then section order. A non-empty category keeps only the
// passages of documents in that category; statistics stay corpus-wide, as in Lucene's filters.
func (l *Lang) Search(query []string, category string, topK int) []Hit {
	return l.SearchWeighted(query, nil, category, topK)
}

// SynonymWeight is how much a synonym of a question's word counts against the word itself, in
// BM25, in L0 and in the lexical support of a block: a synonym bridges operators' words to the
// procedures' but never outweighs the words themselves.
const SynonymWeight = 0.5

// SearchWeighted is Search with a weight per query term (missing terms weigh 1), such as
// SynonymWeight for a synonym's terms.
func (l *Lang) SearchWeighted(query []string, weight map[string]float64, category string, topK int) []Hit {
	if topK <= 0 || len(l.Passages) == 0 {
		return nil
	}
	scores := make([]float64, len(l.Passages))
	for _, t := range unique(query) {
		ps := l.postings[t]
		if len(ps) == 0 {
			continue
		}
		idf := l.IDF(t)
		if w, ok := weight[t]; ok {
			idf *= w
		}
		for _, p := range ps {
			tf := float64(p.tf)
			norm := K1 * (1 - B + B*float64(l.Passages[p.passage].Len)/l.avgLen)
			scores[p.passage] += idf * tf / (tf + norm)
		}
	}
	hits := make([]Hit, 0, topK)
	for i, s := range scores {
		if s <= 0 || (category != "" && l.Docs[l.Passages[i].Doc].Category != category) {
			continue
		}
		hits = append(hits, Hit{Passage: i, Score: s})
	}
	// Passages are stored in (document id, section) order, so a stable sort on score alone
	// keeps the documented tie order.
	slices.SortStableFunc(hits, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	if len(hits) > topK {
		hits = hits[:topK]
	}
	return hits
}

func set(terms []string) map[string]struct{} {
	m := make(map[string]struct{}, len(terms))
	for _, t := range terms {
		m[t] = struct{}{}
	}
	return m
}

// unique returns terms without repeats, in first-seen order.
func unique(terms []string) []string {
	out := make([]string, 0, len(terms))
	for _, t := range terms {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// Support is how much of a question's informative words a passage holds, weighted by IDF. It is
// the lexical evidence the service judges a block by: it does not collapse on a
// long, chatty question, because words the corpus does not know are counted apart (Unknown)
// instead of diluting the share of the words it does know.
type Support struct {
	// Words is the number of the question's informative words (distinct stems of at least three
	// characters with a letter, stop words excluded: "e", "km", "80" are not informative).
	Words int
	// Known is the IDF weight of the informative words the corpus holds; Unknown counts the
	// others (typos, words of other subjects, chat).
	Known   float64
	Unknown int
	// Matched is the number of informative words the passage or its document's front matter
	// holds; Weight is their IDF weight (a compound counts by the share of its known parts).
	Matched int
	Weight  float64
	// Specific is the weight of the matched words by how few procedures use them (BM25's idf
	// over procedures): words of one procedure's subject weigh much, words every procedure
	// uses ("customer", "report", "day") almost nothing.
	Specific float64
}

// Share is Weight over Known: the part of the question's known vocabulary the passage holds.
func (s Support) Share() float64 {
	if s.Known == 0 {
		return 0
	}
	return s.Weight / s.Known
}

// Informative reports whether a term counts as an informative word of a question.
func Informative(term string) bool {
	if len(term) < 3 {
		return false
	}
	for _, r := range term {
		if r < '0' || r > '9' {
			return true
		}
	}
	return false
}

// altKnown is the weight a word the corpus does not know has through its best known synonym.
func (l *Lang) altKnown(g textproc.Group) float64 {
	var w float64
	for _, a := range g.Alts {
		if _, ok := l.idf[a.Term]; ok {
			w = max(w, SynonymWeight*l.IDF(a.Term))
		}
	}
	return w
}

// Support measures the lexical support of a passage for the question's words.
func (l *Lang) Support(query []textproc.Group, passage int) Support {
	p := l.Passages[passage]
	return l.support(query, p.Terms, l.Front[p.Doc].Terms)
}

// SupportDoc is Support over a whole procedure: the words any of its sections or its front
// matter holds.
func (l *Lang) SupportDoc(query []textproc.Group, doc int) Support {
	return l.support(query, l.docTerms[doc], l.Front[doc].Terms)
}

// DocIndex returns the index of the document id in Docs, or -1.
func (l *Lang) DocIndex(id string) int {
	return slices.IndexFunc(l.Docs, func(d *knowledge.Document) bool { return d.ID == id })
}

// SupportText is Support for a passage that is not in the index, such as a RAGcore chunk: text
// is analysed here, and the front matter of the document docID counts as for an indexed passage.
func (l *Lang) SupportText(query []textproc.Group, text, docID string) Support {
	var front map[string]struct{}
	if i := slices.IndexFunc(l.Docs, func(d *knowledge.Document) bool { return d.ID == docID }); i >= 0 {
		front = l.Front[i].Terms
	}
	return l.support(query, set(l.text.Terms(text)), front)
}

func (l *Lang) support(query []textproc.Group, terms, front map[string]struct{}) Support {
	has := func(t string) bool {
		if _, ok := terms[t]; ok {
			return true
		}
		_, ok := front[t]
		return ok
	}
	known := func(t string) bool { _, ok := l.idf[t]; return ok }
	var s Support
	seen := make(map[string]bool, len(query))
	for _, g := range query {
		if seen[g.Term] || !Informative(g.Term) {
			continue
		}
		seen[g.Term] = true
		s.Words++
		// A synonym the passage holds stands in for a word it lacks, at SynonymWeight.
		alt, altSpecific := 0.0, 0.0
		for _, a := range g.Alts {
			if known(a.Term) && has(a.Term) {
				alt = max(alt, SynonymWeight*l.IDF(a.Term))
				altSpecific = max(altSpecific, l.docIDF[a.Term])
			}
		}
		if known(g.Term) {
			w := l.IDF(g.Term)
			s.Known += w
			switch {
			case has(g.Term):
				s.Matched++
				s.Weight += w
				s.Specific += l.docIDF[g.Term]
			case alt > 0:
				s.Matched++
				s.Weight += min(w, alt)
				s.Specific += SynonymWeight * altSpecific
			}
			continue
		}
		// An unknown compound counts as one word by the mean weight of its known parts, halved
		// when only part of the compound is known.
		var partKnown, partHave, partSpecific float64
		n := 0
		for _, part := range g.Parts {
			if !known(part) {
				continue
			}
			n++
			pw := l.IDF(part)
			partKnown += pw
			if has(part) {
				partHave += pw
				partSpecific = max(partSpecific, l.docIDF[part])
			}
		}
		if n == 0 {
			// A word the corpus does not know counts as known through a synonym it knows.
			if alt > 0 {
				s.Known += alt
				s.Matched++
				s.Weight += alt
				s.Specific += SynonymWeight * altSpecific
				continue
			}
			if w := l.altKnown(g); w > 0 {
				s.Known += w
				continue
			}
			s.Unknown++
			continue
		}
		partKnown, partHave = partKnown/float64(n), partHave/float64(n)
		if !g.Complete {
			partKnown, partHave = partKnown/2, partHave/2
		}
		s.Known += partKnown
		switch {
		case partHave > 0:
			s.Matched++
			s.Weight += max(partHave, min(partKnown, alt))
			s.Specific += partSpecific * partHave / partKnown
		case alt > 0:
			s.Specific += SynonymWeight * altSpecific
			s.Matched++
			s.Weight += min(partKnown, alt)
		}
	}
	return s
}
