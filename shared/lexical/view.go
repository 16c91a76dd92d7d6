package lexical

import (
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

// One index holds every version on file (BuildAll, and its prebuilt form); the index of a day is
// a view of it onto the versions in force that day (Project). A view shares every array of the
// index of every version (vocabulary, postings, front matter, phrases, sentences, passages and
// documents, with their ids) and owns only what the day decides: which documents and passages
// are not in force (dead: a search never ranks them, the front matter and the phrases never
// match them, and a term only they hold is unknown), and the statistics over those in force
// (idf over passages and procedures, average length and length normalisation, categories per
// term, title weights, and each document's index by id, category and domain), computed as a
// build of those documents alone computes them, so that a view ranks and judges as that build
// does. No text is analysed and nothing of the corpus's size is copied: a view costs a pass over
// the postings and the statistics' arrays (about 9 ms a language at 10,000 procedures), where
// copying the day's arrays cost about 110 ms and 100 MB. The analysis of questions is the index
// of every version's: for German, compounds are split against the words of every version on
// file.

// BuildAll analyses every version on file of c (knowledge.Corpus.All): the index a prebuilt
// index holds and every day's index is a view of.
func BuildAll(c *knowledge.Corpus) *Index { return Build(c.All()) }

// Project returns the index of on's documents (the versions in force on a day, a view of the
// corpus ix was built from with every version): ix itself when those are all of ix's documents,
// as for a corpus without versions on a day when every procedure is in force, else a view of ix
// (see view). ok is false when a document of on is not one of ix's.
func (ix *Index) Project(on *knowledge.Corpus) (*Index, bool) {
	out := &Index{langs: map[string]*Lang{}}
	same := true
	for lang, l := range ix.langs {
		p, ok := l.project(on.Documents(lang))
		if !ok {
			return nil, false
		}
		same = same && p == l
		out.langs[lang] = p
	}
	if same {
		return ix, true
	}
	return out, true
}

// project returns the language's index of docs, which must be among l.Docs in their order.
func (l *Lang) project(docs []*knowledge.Document) (*Lang, bool) {
	if sameDocs(l.Docs, docs) {
		if l.lazyStats {
			l.statsOnce.Do(l.statistics)
		}
		return l, true
	}
	keep, ok := keptDocs(l.Docs, docs)
	if !ok {
		return nil, false
	}
	// The view: l's arrays, the day's dead documents, passages and terms, and the day's
	// statistics.
	l.phr.derive(l.Docs, len(l.terms.words)) // a view shares the phrase index's
	deadDoc := make([]bool, len(l.Docs))
	for i := range deadDoc {
		deadDoc[i] = true
	}
	for _, d := range keep {
		deadDoc[d] = false
	}
	deadPassage := make([]bool, len(l.Passages))
	for i, p := range l.Passages {
		deadPassage[i] = deadDoc[p.Doc]
	}
	v := &Lang{Language: l.Language, Analyzer: l.Analyzer, Text: l.Text, Docs: l.Docs, Passages: l.Passages,
		terms: l.terms, uncovered: l.uncovered, shared: l.shared, sent: l.sent}
	lp, lf, lx := &l.post, &l.front, &l.phr
	v.post = Postings{postStart: lp.postStart, postPassage: lp.postPassage, postTF: lp.postTF, docStart: lp.docStart,
		avgLen: lp.avgLen, dead: deadPassage, df: make([]uint32, len(lp.postStart)-1)}
	v.front = FrontMatter{frontStart: lf.frontStart, frontTerms: lf.frontTerms, frontDocStart: lf.frontDocStart,
		frontDoc: lf.frontDoc, dead: deadDoc}
	v.phr = PhraseIndex{docPhrase: lx.docPhrase, phraseStart: lx.phraseStart, phraseTerms: lx.phraseTerms,
		termPhraseStart: lx.termPhraseStart, termPhrase: lx.termPhrase, phraseDoc: lx.phraseDoc,
		phraseShape: lx.phraseShape, phraseFirst: lx.phraseFirst, docKeywords: lx.docKeywords, dead: deadDoc}
	docCat := v.docStatistics()
	v.post.statistics(v.Passages, v.front.inForce)
	v.front.statistics(docCat, len(v.categoryIDs))
	v.phr.titleWeights(v.post.idf)
	v.deadTerms = make([]uint64, (len(v.post.df)+63)/64)
	for t, n := range v.post.df {
		if n == 0 && v.front.liveDocs(Term(t)) == 0 {
			v.deadTerms[t>>6] |= 1 << (t & 63)
		}
	}
	return v, true
}

// sameDocs reports whether docs are all of all, in order.
func sameDocs(all, docs []*knowledge.Document) bool {
	if len(docs) != len(all) {
		return false
	}
	for i, d := range docs {
		if d != all[i] {
			return false
		}
	}
	return true
}

// keptDocs are the indexes of docs in all, ascending; false when one is not there.
func keptDocs(all, docs []*knowledge.Document) ([]int, bool) {
	keep := make([]int, 0, len(docs))
	j := 0
	for _, d := range docs {
		for j < len(all) && all[j] != d {
			j++
		}
		if j == len(all) {
			return nil, false
		}
		keep = append(keep, j)
		j++
	}
	return keep, true
}

// footprint is about how many bytes of heap an index holds of its own: for a view, its dead
// marks and statistics, and the scratch its searches and front-matter matches pool (its arrays,
// documents, text and analysis are the index of every version's, and so are the values kept
// with KeptShared); what Epochs counts against its byte bound.
func (ix *Index) footprint() int64 {
	var n int64
	for _, l := range ix.langs {
		V, P, D, F := int64(len(l.terms.words)), int64(len(l.Passages)), int64(len(l.Docs)), int64(l.phr.Len())
		n += V * (8 + 8 + 2 + 4)       // idf, docIDF, frontCats, df
		n += V / 8                     // the dead terms' bits
		n += P * (8 + 4 + 1)           // lenNorm, passageCat, dead passages
		n += D * (1 + 8 + 4 + 16 + 48) // dead documents, titleIDF, docDomain, byID's keys and entries
		n += P*(8+1) + F*2 + D*8       // a search's scores and bits, a match's phrase counts and document weights
	}
	return n
}
