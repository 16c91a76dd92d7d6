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
	if len(docs) == len(l.Docs) {
		same := true
		for i, d := range docs {
			same = same && d == l.Docs[i]
		}
		if same {
			if l.lazyStats {
				l.statsOnce.Do(l.statistics)
			}
			return l, true
		}
	}
	// keep are the old indexes of the documents kept, ascending.
	keep := make([]int, 0, len(docs))
	j := 0
	for _, d := range docs {
		for j < len(l.Docs) && l.Docs[j] != d {
			j++
		}
		if j == len(l.Docs) {
			return nil, false
		}
		keep = append(keep, j)
		j++
	}
	p := &Lang{Language: l.Language, Analyzer: l.Analyzer, text: l.text, Docs: docs, uncovered: l.uncovered}
	// Every array is made with room for the largest it can be (that of every version), so that
	// a projection allocates each once.
	p.Passages = make([]Passage, 0, len(l.Passages))
	p.docStart = make([]uint32, 0, len(docs)+1)

	// Passages: old passage -> new, -1 when its document is not kept.
	newPassage := make([]int32, len(l.Passages))
	for i := range newPassage {
		newPassage[i] = -1
	}
	total := 0
	for nd, od := range keep {
		p.docStart = append(p.docStart, uint32(len(p.Passages)))
		for op := l.docStart[od]; op < l.docStart[od+1]; op++ {
			old := l.Passages[op]
			newPassage[op] = int32(len(p.Passages))
			p.Passages = append(p.Passages, Passage{Doc: nd, Section: old.Section, Len: old.Len})
			total += old.Len
		}
	}
	p.docStart = append(p.docStart, uint32(len(p.Passages)))
	if len(p.Passages) > 0 {
		p.avgLen = float64(total) / float64(len(p.Passages))
	}
	newDoc := make([]int32, len(l.Docs))
	for i := range newDoc {
		newDoc[i] = -1
	}
	for nd, od := range keep {
		newDoc[od] = int32(nd)
	}

	// Terms: those of a kept passage or a kept document's front matter, renumbered in order.
	V := len(l.terms.words)
	live := make([]bool, V)
	for t := range V {
		for _, op := range l.postPassage[l.postStart[t]:l.postStart[t+1]] {
			if newPassage[op] >= 0 {
				live[t] = true
				break
			}
		}
	}
	for _, od := range keep {
		for _, t := range l.frontOf(od) {
			live[t] = true
		}
	}
	newTerm := make([]Term, V)
	words := make([]string, 0, V)
	for t := range V {
		if live[t] {
			newTerm[t] = Term(len(words))
			words = append(words, l.terms.words[t])
		}
	}
	p.terms = newTermTable(words)

	// Postings and the inverted front matter, per kept term in order.
	p.postStart = make([]uint32, 0, len(words)+1)
	p.frontDocStart = make([]uint32, 0, len(words)+1)
	p.postPassage, p.postTF = make([]uint32, 0, len(l.postPassage)), make([]uint16, 0, len(l.postTF))
	p.frontDoc = make([]uint32, 0, len(l.frontDoc))
	for t := range V {
		if !live[t] {
			continue
		}
		p.postStart = append(p.postStart, uint32(len(p.postPassage)))
		for i := l.postStart[t]; i < l.postStart[t+1]; i++ {
			if np := newPassage[l.postPassage[i]]; np >= 0 {
				p.postPassage = append(p.postPassage, uint32(np))
				p.postTF = append(p.postTF, l.postTF[i])
			}
		}
		p.frontDocStart = append(p.frontDocStart, uint32(len(p.frontDoc)))
		for _, od := range l.frontDocs(Term(t)) {
			if nd := newDoc[od]; nd >= 0 {
				p.frontDoc = append(p.frontDoc, uint32(nd))
			}
		}
	}
	p.postStart = append(p.postStart, uint32(len(p.postPassage)))
	p.frontDocStart = append(p.frontDocStart, uint32(len(p.frontDoc)))

	// Each kept document's front-matter terms and phrases; a keyword or entity phrase's first
	// phrase of the same text is the first kept one.
	newPhrase := make([]int32, len(l.phraseFirst))
	for i := range newPhrase {
		newPhrase[i] = -1
	}
	p.frontStart, p.frontTerms = make([]uint32, 0, len(keep)+1), make([]Term, 0, len(l.frontTerms))
	p.docPhrase, p.phraseStart = make([]uint32, 0, len(keep)+1), make([]uint32, 0, len(l.phraseStart))
	p.phraseTerms, p.phraseFirst = make([]Term, 0, len(l.phraseTerms)), make([]uint32, 0, len(l.phraseFirst))
	for _, od := range keep {
		p.frontStart = append(p.frontStart, uint32(len(p.frontTerms)))
		for _, t := range l.frontOf(od) {
			p.frontTerms = append(p.frontTerms, newTerm[t])
		}
		p.docPhrase = append(p.docPhrase, uint32(len(p.phraseStart)))
		for op := l.docPhrase[od]; op < l.docPhrase[od+1]; op++ {
			np := uint32(len(p.phraseStart))
			p.phraseStart = append(p.phraseStart, uint32(len(p.phraseTerms)))
			for _, t := range l.phraseTerms[l.phraseStart[op]:l.phraseStart[op+1]] {
				p.phraseTerms = append(p.phraseTerms, newTerm[t])
			}
			f := l.phraseFirst[op]
			if newPhrase[f] < 0 {
				newPhrase[f] = int32(np)
			}
			p.phraseFirst = append(p.phraseFirst, uint32(newPhrase[f]))
		}
	}
	p.frontStart = append(p.frontStart, uint32(len(p.frontTerms)))
	p.docPhrase = append(p.docPhrase, uint32(len(p.phraseStart)))
	p.phraseStart = append(p.phraseStart, uint32(len(p.phraseTerms)))

	// Sentences, per kept passage.
	np := len(p.Passages) + 1
	p.sentStart, p.sentTermStart, p.maskStart = make([]uint32, 0, np), make([]uint32, 0, np), make([]uint32, 0, np)
	p.sentKinds, p.sentTerms = make([]uint16, 0, len(l.sentKinds)), make([]Term, 0, len(l.sentTerms))
	p.sentMasks = make([]uint16, 0, len(l.sentMasks))
	for op := range l.Passages {
		if newPassage[op] < 0 {
			continue
		}
		p.sentStart = append(p.sentStart, uint32(len(p.sentKinds)))
		p.sentKinds = append(p.sentKinds, l.sentKinds[l.sentStart[op]:l.sentStart[op+1]]...)
		p.sentTermStart = append(p.sentTermStart, uint32(len(p.sentTerms)))
		for _, t := range l.sentTerms[l.sentTermStart[op]:l.sentTermStart[op+1]] {
			p.sentTerms = append(p.sentTerms, newTerm[t])
		}
		p.maskStart = append(p.maskStart, uint32(len(p.sentMasks)))
		p.sentMasks = append(p.sentMasks, l.sentMasks[l.maskStart[op]:l.maskStart[op+1]]...)
	}
	p.sentStart = append(p.sentStart, uint32(len(p.sentKinds)))
	p.sentTermStart = append(p.sentTermStart, uint32(len(p.sentTerms)))
	p.maskStart = append(p.maskStart, uint32(len(p.sentMasks)))

	p.statistics()
	return p, true
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
		n += int64(len(l.postPassage))*6 + int64(len(l.frontTerms)+len(l.frontDoc)+len(l.phraseTerms)+len(l.termPhrase))*4
		n += int64(len(l.phraseFirst)+len(l.phraseDoc))*4 + int64(len(l.phraseShape)) + int64(len(l.titleIDF))*8
		n += int64(len(l.sentTerms))*4 + int64(len(l.sentKinds)+len(l.sentMasks))*2
	}
	return n
}
