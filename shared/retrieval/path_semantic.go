package retrieval

// PathSemantic names the semantic search in lookup.Alternative.FavouredBy.
const PathSemantic = "semantic"

// semanticSearch ranks procedures by the best cosine similarity of their L1 candidates, a
// semantic provider's (never the sidecar's, never the demo provider's). It leads: its preference
// for another procedure is overruled only when it is a tie every other path decides for the
// procedure, and its decisive margin stands against the other paths' (chosen on the development
// sets of eval/, see docs/retrieval.md, "Evidence state").
var semanticSearch = &semanticPath{close: 0.05, margin: 0.055, tie: SemanticTie}

// SemanticTie is the semantic search's tie: a preference for another procedure by less than this
// cosine difference is outvoted when every other path is decisive for the primary block's
// procedure (docs/retrieval.md, "Evidence state", rule 3). make calibrate measures other ties
// on the configured provider (GroundedAtTie).
const SemanticTie = 0.01

// semanticPath is the semantic search's path.
type semanticPath struct {
	// close is the cosine difference within which another procedure is as good as the
	// favourite: a real retriever's errors sit that close (near neighbours first).
	close float64
	// margin is the margin over every other procedure from which the favourite stands alone
	// against a path that prefers another procedure.
	margin float64
	// tie is the cosine difference below which the path's preference for another procedure is a
	// tie: a retriever that places the answer and its neighbours a few thousandths apart orders
	// them by chance within it.
	tie float64
}

func (*semanticPath) name() string { return PathSemantic }

func (*semanticPath) rank(in pathInput, v *pathView) {
	if !in.semantic {
		return
	}
	v.kind = in.scoreKind
	for _, c := range in.cands {
		v.add(c.DocumentID, c.Score, c.Source)
	}
}

// beats: any higher cosine.
func (*semanticPath) beats(x, y float64) bool { return x > y }

func (p *semanticPath) near(r, own float64) bool { return own-r < p.close }

func (*semanticPath) opinion(float64) bool { return true }

func (*semanticPath) prefers(other string) string { return "the semantic search ranks " + other }

func (p *semanticPath) decisive(doc string, v *pathView) bool {
	own, ok := v.score(doc)
	if !ok {
		return false
	}
	ru, ok := v.runnerUp(doc)
	return !ok || own-ru.score >= p.margin
}

func (p *semanticPath) tied(ps PathSignal, doc string) bool {
	return ps.Ranked && ps.First != doc && ps.FirstScore-ps.Own < p.tie
}
