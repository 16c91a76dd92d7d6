package lexical

import (
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

// One index holds every version on file (BuildAll, and its prebuilt form); the index of a day is
// its projection onto the versions in force that day (Project): the passages, front matter,
// phrases and sentences of those documents, copied out of the index of every version with their
// terms renumbered to the vocabulary those documents use, and the statistics (idf over passages
// and procedures, average length, categories per term, title weights) computed over them alone,
// as a build of those documents alone would. No text is analysed: a projection costs a pass over
// the arrays of every version (about 0.3 ms a language on the embedded corpus), where analysing
// the documents costs tens of milliseconds. The analysis of questions is the index of every
// version's: for German, compounds are split against the words of every version on file.

// BuildAll analyses every version on file of c (knowledge.Corpus.All): the index a prebuilt
// index holds and every day's index is projected from.
func BuildAll(c *knowledge.Corpus) *Index { return Build(c.All()) }

// Project returns the index of on's documents (the versions in force on a day, a view of the
// corpus ix was built from with every version): ix itself when those are all of ix's documents,
// as for a corpus without versions on a day when every procedure is in force. ok is false when
// a document of on is not one of ix's.
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
	pj := projection{from: l, keep: keep,
		to: &Lang{Language: l.Language, Analyzer: l.Analyzer, Text: l.Text, Docs: docs, uncovered: l.uncovered, shared: l.shared}}
	pj.passages()
	pj.terms()
	pj.postings()
	pj.front()
	pj.sentences()
	pj.to.statistics()
	return pj.to, true
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

// projection is one projection in the making: the index of every version (from), the documents
// kept, and the renumbering of passages, documents and terms from the old index to the new (-1,
// or not live, when not kept). Every array is made with room for the largest it can be (that of
// every version), so that a projection allocates each once.
type projection struct {
	from, to           *Lang
	keep               []int
	newPassage, newDoc []int32
	live               []bool
	newTerm            []Term
}

// passages copies the kept documents' passages and their document starts.
func (pj *projection) passages() {
	l, p := pj.from, pj.to
	p.Passages = make([]Passage, 0, len(l.Passages))
	p.post.docStart = make([]uint32, 0, len(pj.keep)+1)
	pj.newPassage = filled(len(l.Passages))
	total := 0
	for nd, od := range pj.keep {
		p.post.docStart = append(p.post.docStart, uint32(len(p.Passages)))
		for op := l.post.docStart[od]; op < l.post.docStart[od+1]; op++ {
			old := l.Passages[op]
			pj.newPassage[op] = int32(len(p.Passages))
			p.Passages = append(p.Passages, Passage{Doc: nd, Section: old.Section, Len: old.Len})
			total += old.Len
		}
	}
	p.post.docStart = append(p.post.docStart, uint32(len(p.Passages)))
	if len(p.Passages) > 0 {
		p.post.avgLen = float64(total) / float64(len(p.Passages))
	}
	pj.newDoc = filled(len(l.Docs))
	for nd, od := range pj.keep {
		pj.newDoc[od] = int32(nd)
	}
}

// filled is n entries of -1.
func filled(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = -1
	}
	return out
}

// terms keeps the terms of a kept passage or a kept document's front matter, renumbered in order.
func (pj *projection) terms() {
	l := pj.from
	V := len(l.terms.words)
	pj.live = make([]bool, V)
	for t := range V {
		for _, op := range l.post.postPassage[l.post.postStart[t]:l.post.postStart[t+1]] {
			if pj.newPassage[op] >= 0 {
				pj.live[t] = true
				break
			}
		}
	}
	for _, od := range pj.keep {
		for _, t := range l.front.of(od) {
			pj.live[t] = true
		}
	}
	pj.newTerm = make([]Term, V)
	words := make([]string, 0, V)
	for t := range V {
		if pj.live[t] {
			pj.newTerm[t] = Term(len(words))
			words = append(words, l.terms.words[t])
		}
	}
	pj.to.terms = newTermTable(words)
}

// postings copies the postings and the inverted front matter of each kept term, in order.
func (pj *projection) postings() {
	l, p := pj.from, pj.to
	n := len(p.terms.words) + 1
	p.post.postStart, p.front.frontDocStart = make([]uint32, 0, n), make([]uint32, 0, n)
	p.post.postPassage, p.post.postTF = make([]uint32, 0, len(l.post.postPassage)), make([]uint16, 0, len(l.post.postTF))
	p.front.frontDoc = make([]uint32, 0, len(l.front.frontDoc))
	for t, live := range pj.live {
		if !live {
			continue
		}
		p.post.postStart = append(p.post.postStart, uint32(len(p.post.postPassage)))
		for i := l.post.postStart[t]; i < l.post.postStart[t+1]; i++ {
			if np := pj.newPassage[l.post.postPassage[i]]; np >= 0 {
				p.post.postPassage = append(p.post.postPassage, uint32(np))
				p.post.postTF = append(p.post.postTF, l.post.postTF[i])
			}
		}
		p.front.frontDocStart = append(p.front.frontDocStart, uint32(len(p.front.frontDoc)))
		for _, od := range l.front.docs(Term(t)) {
			if nd := pj.newDoc[od]; nd >= 0 {
				p.front.frontDoc = append(p.front.frontDoc, uint32(nd))
			}
		}
	}
	p.post.postStart = append(p.post.postStart, uint32(len(p.post.postPassage)))
	p.front.frontDocStart = append(p.front.frontDocStart, uint32(len(p.front.frontDoc)))
}

// front copies each kept document's front-matter terms and phrases; a keyword or entity
// phrase's first phrase of the same text is the first kept one.
func (pj *projection) front() {
	l, p := pj.from, pj.to
	newPhrase := filled(len(l.phr.phraseFirst))
	p.front.frontStart, p.front.frontTerms = make([]uint32, 0, len(pj.keep)+1), make([]Term, 0, len(l.front.frontTerms))
	p.phr.docPhrase, p.phr.phraseStart = make([]uint32, 0, len(pj.keep)+1), make([]uint32, 0, len(l.phr.phraseStart))
	p.phr.phraseTerms, p.phr.phraseFirst = make([]Term, 0, len(l.phr.phraseTerms)), make([]uint32, 0, len(l.phr.phraseFirst))
	for _, od := range pj.keep {
		p.front.frontStart = append(p.front.frontStart, uint32(len(p.front.frontTerms)))
		for _, t := range l.front.of(od) {
			p.front.frontTerms = append(p.front.frontTerms, pj.newTerm[t])
		}
		p.phr.docPhrase = append(p.phr.docPhrase, uint32(len(p.phr.phraseStart)))
		for op := l.phr.docPhrase[od]; op < l.phr.docPhrase[od+1]; op++ {
			np := uint32(len(p.phr.phraseStart))
			p.phr.phraseStart = append(p.phr.phraseStart, uint32(len(p.phr.phraseTerms)))
			for _, t := range l.phr.phraseTerms[l.phr.phraseStart[op]:l.phr.phraseStart[op+1]] {
				p.phr.phraseTerms = append(p.phr.phraseTerms, pj.newTerm[t])
			}
			f := l.phr.phraseFirst[op]
			if newPhrase[f] < 0 {
				newPhrase[f] = int32(np)
			}
			p.phr.phraseFirst = append(p.phr.phraseFirst, uint32(newPhrase[f]))
		}
	}
	p.front.frontStart = append(p.front.frontStart, uint32(len(p.front.frontTerms)))
	p.phr.docPhrase = append(p.phr.docPhrase, uint32(len(p.phr.phraseStart)))
	p.phr.phraseStart = append(p.phr.phraseStart, uint32(len(p.phr.phraseTerms)))
}

// sentences copies the sentences of each kept passage.
func (pj *projection) sentences() {
	l, p := pj.from, pj.to
	np := len(p.Passages) + 1
	p.sent.sentStart, p.sent.sentTermStart, p.sent.maskStart = make([]uint32, 0, np), make([]uint32, 0, np), make([]uint32, 0, np)
	p.sent.sentKinds, p.sent.sentTerms = make([]uint16, 0, len(l.sent.sentKinds)), make([]Term, 0, len(l.sent.sentTerms))
	p.sent.sentMasks = make([]uint16, 0, len(l.sent.sentMasks))
	for op := range l.Passages {
		if pj.newPassage[op] < 0 {
			continue
		}
		p.sent.sentStart = append(p.sent.sentStart, uint32(len(p.sent.sentKinds)))
		p.sent.sentKinds = append(p.sent.sentKinds, l.sent.sentKinds[l.sent.sentStart[op]:l.sent.sentStart[op+1]]...)
		p.sent.sentTermStart = append(p.sent.sentTermStart, uint32(len(p.sent.sentTerms)))
		for _, t := range l.sent.sentTerms[l.sent.sentTermStart[op]:l.sent.sentTermStart[op+1]] {
			p.sent.sentTerms = append(p.sent.sentTerms, pj.newTerm[t])
		}
		p.sent.maskStart = append(p.sent.maskStart, uint32(len(p.sent.sentMasks)))
		p.sent.sentMasks = append(p.sent.sentMasks, l.sent.sentMasks[l.sent.maskStart[op]:l.sent.maskStart[op+1]]...)
	}
	p.sent.sentStart = append(p.sent.sentStart, uint32(len(p.sent.sentKinds)))
	p.sent.sentTermStart = append(p.sent.sentTermStart, uint32(len(p.sent.sentTerms)))
	p.sent.maskStart = append(p.sent.maskStart, uint32(len(p.sent.sentMasks)))
}

// footprint is about how many bytes of heap a projected index holds of its own (its arrays,
// statistics and vocabulary map; the documents, the text and the analysis are its base's): what
// Epochs counts against its byte bound.
func (ix *Index) footprint() int64 {
	var n int64
	for _, l := range ix.langs {
		V, P := int64(len(l.terms.words)), int64(len(l.Passages))
		n += V * (16 + 48)               // the words and their map entries
		n += V * (8 + 8 + 2 + 4 + 4 + 4) // idf, docIDF, frontCats, postStart, frontDocStart, termPhraseStart
		n += P * (24 + 8 + 4 + 12)       // passages, lenNorm, passageCat, sentence offsets
		n += int64(len(l.post.postPassage))*6 + int64(len(l.front.frontTerms)+len(l.front.frontDoc)+len(l.phr.phraseTerms)+len(l.phr.termPhrase))*4
		n += int64(len(l.phr.phraseFirst)+len(l.phr.phraseDoc))*4 + int64(len(l.phr.phraseShape)) + int64(len(l.phr.titleIDF))*8
		n += int64(len(l.sent.sentTerms))*4 + int64(len(l.sent.sentKinds)+len(l.sent.sentMasks))*2
	}
	return n
}
