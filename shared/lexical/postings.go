package lexical

import (
	"fmt"
	"math"
	"slices"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

// Postings is the index part of the passages' terms: per term (indexed by Term), its postings,
// passages ascending, at postPassage[postStart[t]:postStart[t+1]] with the term's frequency in
// postTF, and its BM25 idf over passages (the idf of an unseen term for a term only the front
// matter has) and over procedures; per document, its passages [docStart[d], docStart[d+1]). It
// owns its build, its statistics, its prebuilt form (encode, decode) and its check.
type Postings struct {
	postStart   []uint32
	postPassage []uint32
	postTF      []uint16
	idf         []float64
	docIDF      []float64
	docStart    []uint32
	unseen      float64
	avgLen      float64
	// lenNorm is each passage's BM25 length normalisation, K1 * (1 - B + B*len/avgLen), derived
	// from the passages (see statistics): Search reads it for every posting it walks.
	lenNorm []float64

	// In a day's view of the index of every version (see view.go): dead marks the passages of
	// the documents not in force that day, and day holds the statistics of the terms over those
	// in force, each made on its first use (idf and docIDF are then unused); both nil in an index
	// whose passages are all in force.
	dead []bool
	day  *dayStats
}

// Postings returns the language's postings.
func (l *Lang) Postings() *Postings { return &l.post }

// build fills the postings from the analysed documents and returns their passages: count, then
// fill, so that each term's list is one ascending run.
func (p *Postings) build(all []analysed, terms termTable) []Passage {
	V := len(terms.words)
	id := func(t string) Term { return terms.ids[t] }
	type tf struct {
		term Term
		n    uint16
	}
	var perPassage [][]tf
	var passages []Passage
	counts := make([]uint32, V+1)
	total := 0
	for di, an := range all {
		p.docStart = append(p.docStart, uint32(len(passages)))
		for si, ts := range an.passages {
			freq := map[Term]uint16{}
			for _, t := range ts {
				if n := freq[id(t)]; n < math.MaxUint16 {
					freq[id(t)] = n + 1
				}
			}
			row := make([]tf, 0, len(freq))
			for t, n := range freq {
				row = append(row, tf{t, n})
				counts[t+1]++
			}
			slices.SortFunc(row, func(x, y tf) int { return int(x.term) - int(y.term) })
			perPassage = append(perPassage, row)
			passages = append(passages, Passage{Doc: di, Section: si, Len: len(ts)})
			total += len(ts)
		}
	}
	p.docStart = append(p.docStart, uint32(len(passages)))
	for t := range V {
		counts[t+1] += counts[t]
	}
	p.postStart = counts
	p.postPassage = make([]uint32, counts[V])
	p.postTF = make([]uint16, counts[V])
	next := slices.Clone(counts[:V])
	for pi, row := range perPassage {
		for _, e := range row {
			p.postPassage[next[e.term]] = uint32(pi)
			p.postTF[next[e.term]] = e.n
			next[e.term]++
		}
	}
	if len(passages) > 0 {
		p.avgLen = float64(total) / float64(len(passages))
	}
	return passages
}

// statistics derives each passage's length normalisation and each term's idf over passages and
// over procedures (of docs).
func (p *Postings) statistics(passages []Passage, docs int) {
	V := len(p.postStart) - 1
	p.lengths(passages, len(passages))
	N, D := p.idfBase(len(passages)), float64(docs)
	p.idf = make([]float64, V)
	p.docIDF = make([]float64, V)
	docOf := docsOf(passages, nil)
	for t := range V {
		n, docs := p.count(t, docOf)
		if n == 0 {
			p.idf[t] = p.unseen
			continue
		}
		p.idf[t] = bm25IDF(N, float64(n))
		p.docIDF[t] = bm25IDF(D, float64(docs))
	}
}

// idfBase is the number of passages the idf over passages counts for live passages in force:
// at least MinIDFPassages (see there).
func (p *Postings) idfBase(live int) float64 { return float64(max(live, MinIDFPassages)) }

// lengths sets the idf of an unseen term over live passages in force and each passage's length
// normalisation over their average length.
func (p *Postings) lengths(passages []Passage, live int) {
	p.unseen = bm25IDF(p.idfBase(live), 0)
	p.lenNorm = make([]float64, len(passages))
	for i, ps := range passages {
		p.lenNorm[i] = K1 * (1 - B + B*float64(ps.Len)/p.avgLen)
	}
}

// docsOf is each passage's document plus one, 0 for a dead one (dead nil: none is), in one array
// a sixth of the passages' size, which a walk over postings reads for every posting.
func docsOf(passages []Passage, dead []bool) []uint32 {
	docOf := make([]uint32, len(passages))
	for i, ps := range passages {
		if dead == nil || !dead[i] {
			docOf[i] = uint32(ps.Doc) + 1
		}
	}
	return docOf
}

// count returns how many passages (docOf not 0) and documents hold the term.
func (p *Postings) count(t int, docOf []uint32) (n, docs int) {
	last := uint32(0)
	for _, pi := range p.postPassage[p.postStart[t]:p.postStart[t+1]] {
		d := docOf[pi]
		if d == 0 {
			continue
		}
		n++
		if d != last {
			docs, last = docs+1, d
		}
	}
	return n, docs
}

// liveAverage sets avgLen to the average length of the passages in force, summed in passage
// order as a build of them sums it, and returns how many there are.
func (p *Postings) liveAverage(passages []Passage) int {
	live, total := 0, 0
	for i, ps := range passages {
		if !p.dead[i] {
			live, total = live+1, total+ps.Len
		}
	}
	p.avgLen = 0
	if live > 0 {
		p.avgLen = float64(total) / float64(live)
	}
	return live
}

// MinIDFPassages is the fewest passages the idf over passages counts: a corpus of fewer (one or
// two procedures) is taken as part of a corpus of this many, the others not holding its words.
// Over five passages the idf has no range, every word of a procedure's subject is in all of
// them and weighs almost nothing, and the evidence rules, whose figures are sums of idf (see
// shared/retrieval), could never ground an answer. Below the 64 passages of the embedded
// corpus's languages, so that its figures are its own.
const MinIDFPassages = 48

func bm25IDF(N, n float64) float64 { return math.Log(1 + (N-n+0.5)/(n+0.5)) }

// Known reports whether a passage in force holds the term (the front matter alone does not count).
func (p *Postings) Known(t Term) bool {
	if p.day != nil {
		n, _ := p.day.held(t)
		return n > 0
	}
	return p.postStart[t+1] > p.postStart[t]
}

// Terms is the number of terms of the vocabulary, the bound of every Term.
func (p *Postings) Terms() int { return len(p.postStart) - 1 }

// InForce reports whether the passage is one of a document in force (in a day's view, see
// view.go; every passage of an index built or loaded for a set of documents is).
func (p *Postings) InForce(passage int) bool { return p.dead == nil || !p.dead[passage] }

func (p *Postings) postings(t Term) []uint32 { return p.postPassage[p.postStart[t]:p.postStart[t+1]] }

// PassageHas reports whether the passage holds the term.
func (p *Postings) PassageHas(passage int, t Term) bool {
	_, ok := lowerBound(p.postings(t), uint32(passage))
	return ok
}

// DocHas reports whether any passage of the document holds the term.
func (p *Postings) DocHas(doc int, t Term) bool {
	ps := p.postings(t)
	i, _ := lowerBound(ps, p.docStart[doc])
	return i < len(ps) && ps[i] < p.docStart[doc+1]
}

// DocPostings returns the passages of the document doc that hold the term, ascending.
func (p *Postings) DocPostings(doc int, t Term) []uint32 {
	ps := p.postings(t)
	lo, _ := lowerBound(ps, p.docStart[doc])
	hi := lo
	for hi < len(ps) && ps[hi] < p.docStart[doc+1] {
		hi++
	}
	return ps[lo:hi]
}

// DocPassages returns the passages of one document as the range [lo, hi).
func (p *Postings) DocPassages(doc int) (lo, hi int) {
	return int(p.docStart[doc]), int(p.docStart[doc+1])
}

// IDF is a term's BM25 idf over passages (see Lang.IDF).
func (p *Postings) IDF(t Term) float64 {
	if p.day != nil {
		return p.day.idf(t)
	}
	return p.idf[t]
}

// DocIDF is a term's BM25 idf over procedures: words of one procedure's subject weigh much,
// words every procedure uses almost nothing.
func (p *Postings) DocIDF(t Term) float64 {
	if p.day != nil {
		return p.day.docIDF(t)
	}
	return p.docIDF[t]
}

// IDF is Lucene's BM25 idf, log(1 + (N - n + 0.5) / (n + 0.5)): never negative, and largest for
// a term that no passage contains.
func (l *Lang) IDF(term string) float64 {
	if t, ok := l.Lookup(term); ok {
		return l.post.IDF(t)
	}
	return l.post.unseen
}

// bestSection returns the passage of the document that shares the most idf weight with the
// terms; the document's first passage (its scope) when none shares any. Its cost follows the
// terms' postings within the document, not the document's length.
func (p *Postings) bestSection(doc int, terms []Term) int {
	lo, hi := p.DocPassages(doc)
	var small [32]float64
	var w []float64
	if hi-lo > len(small) {
		w = make([]float64, hi-lo)
	} else {
		w = small[:hi-lo]
	}
	for _, t := range terms {
		for _, q := range p.DocPostings(doc, t) {
			w[int(q)-lo] += p.IDF(t)
		}
	}
	best, bestW := lo, 0.0
	for i, x := range w {
		if x > bestW {
			best, bestW = lo+i, x
		}
	}
	return best
}

// encode writes the postings and the passages (version 6 of the format: the average length is
// written apart, after the front matter, see encodeAvgLen).
func (p *Postings) encode(e *encoder, passages []Passage) {
	e.u32s(p.postStart)
	e.u32s(p.postPassage)
	e.u16s(p.postTF)
	doc, sec, n := make([]uint32, len(passages)), make([]uint32, len(passages)), make([]uint32, len(passages))
	for i, ps := range passages {
		doc[i], sec[i], n[i] = uint32(ps.Doc), uint32(ps.Section), uint32(ps.Len)
	}
	e.u32s(doc)
	e.u32s(sec)
	e.u32s(n)
	e.u32s(p.docStart)
}

// encodeAvgLen writes the passages' average length.
func (p *Postings) encodeAvgLen(e *encoder) { e.u64(math.Float64bits(p.avgLen)) }

// decode reads what encode wrote, and returns the passages, each checked against the documents.
func (p *Postings) decode(d *decoder, docs []*knowledge.Document) ([]Passage, error) {
	p.postStart, p.postPassage, p.postTF = d.u32s(), d.u32s(), d.u16s()
	doc, sec, n := d.u32s(), d.u32s(), d.u32s()
	p.docStart = d.u32s()
	if len(doc) != len(sec) || len(doc) != len(n) {
		return nil, fmt.Errorf("%w: passage arrays differ in length", ErrPrebuilt)
	}
	passages := make([]Passage, len(doc))
	for i := range doc {
		if int(doc[i]) >= len(docs) || int(sec[i]) >= len(docs[doc[i]].Sections) {
			return nil, fmt.Errorf("%w: passage %d names no section", ErrPrebuilt, i)
		}
		passages[i] = Passage{Doc: int(doc[i]), Section: int(sec[i]), Len: int(n[i])}
	}
	return passages, nil
}

// decodeAvgLen reads what encodeAvgLen wrote.
func (p *Postings) decodeAvgLen(d *decoder) { p.avgLen = math.Float64frombits(d.u64()) }

// check verifies the decoded postings against a vocabulary of V terms, the passages and D
// documents: offsets within their arrays, ids in range, postings ascending (membership and
// section choice search them), and each document's passages its own (PassageOf reads their
// sections in its list).
func (p *Postings) check(V int, passages []Passage, docs []*knowledge.Document) error {
	D := len(docs)
	switch {
	case !offsetsTo(p.postStart, V, len(p.postPassage)) || len(p.postTF) != len(p.postPassage) || !idsBelow(p.postPassage, len(passages)):
		return badPrebuilt("postings")
	case !offsetsTo(p.docStart, D, len(passages)):
		return badPrebuilt("document passages")
	}
	for t := range V {
		ps := p.postings(Term(t))
		for i := 1; i < len(ps); i++ {
			if ps[i] <= ps[i-1] {
				return badPrebuilt("postings order")
			}
		}
	}
	for di, d := range docs {
		for pi := p.docStart[di]; pi < p.docStart[di+1]; pi++ {
			if passages[pi].Doc != di {
				return badPrebuilt("passages of " + d.ID)
			}
		}
	}
	return nil
}
