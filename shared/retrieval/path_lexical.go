package retrieval

// PathLexical names the lexical search in lookup.Alternative.FavouredBy.
const PathLexical = "lexical"

// lexicalSearch ranks procedures by the best BM25 score of their sections in an unfiltered search
// of the local copy of the procedures, run in every mode (on the demo path the provider's own
// unfiltered candidates are that search). Its figures were chosen on the development sets of
// eval/ (docs/retrieval.md, "Evidence state").
var lexicalSearch = &lexicalPath{close: 0.8, held: 0.5}

// lexicalPath is the lexical search's path.
type lexicalPath struct {
	// close is the share of the favourite's BM25 score from which another procedure is a close
	// runner-up; held the share of the favourite's score a procedure that a leading path
	// decisively prefers must hold here.
	close, held float64
}

// bm25Kind labels a BM25 score of the local copy's sections (port.Score.Kind).
const bm25Kind = "bm25"

// lexicalPool is how many sections the lexical path ranks.
const lexicalPool = 12

func (*lexicalPath) name() string { return PathLexical }

func (*lexicalPath) rank(in pathInput, v *pathView) {
	v.kind = bm25Kind
	if in.lexicalCands {
		for _, c := range in.cands {
			v.add(c.DocumentID, c.Score, c.Source)
		}
		return
	}
	l, hits := in.l, in.searched
	if in.conf.on() {
		hits = l.SearchWeightedIn(in.q.terms, in.q.weights, in.conf.doc, lexicalPool)
	}
	for _, h := range hits {
		d, _ := l.Doc(h.Passage)
		v.add(d.ID, h.Score, l.Source(h.Passage))
	}
}

// beats: a BM25 score more than 1 % higher (closer is the same evidence, see ScaleOf).
func (*lexicalPath) beats(x, y float64) bool { return x > y*1.01 }

func (p *lexicalPath) near(r, own float64) bool { return r >= p.close*own }

func (*lexicalPath) opinion(float64) bool { return true }

func (*lexicalPath) prefers(other string) string { return "the lexical search ranks first " + other }

func (p *lexicalPath) holds(doc string, v *pathView) bool {
	own, _ := v.score(doc)
	first, ok := v.first()
	return !ok || own >= p.held*first.score
}
