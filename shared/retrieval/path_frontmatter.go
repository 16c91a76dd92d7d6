package retrieval

// PathFrontMatter names the front matter in lookup.Alternative.FavouredBy.
const PathFrontMatter = "front_matter"

// frontMatter ranks procedures by L0's weight of their keywords, entities and title for the
// question. It seconds the lexical search: its names ("lock", "ticket") name several situations,
// so that it alone does not decide what the sections' own words cannot tell apart. Its figures
// were chosen on the development sets of eval/ (docs/retrieval.md, "Evidence state").
var frontMatter = &frontPath{close: 0.8, min: 1.0}

// l0WeightKind labels a procedure's L0 weight of its front matter for the question, the score of
// a block only L0 found (port.Score.Kind).
const l0WeightKind = "l0_weight"

// frontPath is the front matter's path.
type frontPath struct {
	// close is the share of the favourite's weight from which another procedure is as well
	// named; min the weight below which the front matter has no opinion.
	close, min float64
}

func (*frontPath) name() string { return PathFrontMatter }

func (*frontPath) rank(in pathInput, v *pathView) {
	v.kind = l0WeightKind
	for i := range in.matches {
		if m := &in.matches[i]; m.Weight > 0 {
			v.addMatch(in.l.Docs[m.Doc].ID, m)
		}
	}
}

// beats: a front-matter weight more than 5 % higher.
func (*frontPath) beats(x, y float64) bool { return x > y*1.05 }

func (p *frontPath) near(r, own float64) bool { return r >= p.close*own }

func (p *frontPath) opinion(first float64) bool { return first >= p.min }

func (*frontPath) prefers(other string) string { return "the front matter names " + other }

func (*frontPath) seconds() evidencePath { return lexicalSearch }

func (*frontPath) rivalled(other string) string {
	return "the front matter names " + other + " about as much, and the sections' words alone do not choose between them"
}

func (*frontPath) undecided(other string) string {
	return "the lexical search does not tell it apart from " + other + ", and the front matter alone does not decide"
}
