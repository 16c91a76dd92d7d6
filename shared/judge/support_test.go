package judge

import (
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/synonyms"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

func words(terms ...string) []textproc.Group {
	out := make([]textproc.Group, 0, len(terms))
	for _, t := range terms {
		out = append(out, textproc.Group{Term: t})
	}
	return out
}

func TestSupport(t *testing.T) {
	l := lexical.BuildLang("en", []*knowledge.Document{testutil.Doc("a-doc", "one", "battery low"), testutil.Doc("b-doc", "two", "tyre")}, &synonyms.Set{})
	if got := PassageSupport(l, NewQuestion(l, words("batteri", "low")), 0); got.Matched != 2 || got.Share() != 1 || got.Unknown != 0 {
		t.Errorf("full support = %+v", got)
	}
	// A word the corpus does not know is counted apart: it does not dilute the share.
	if got := PassageSupport(l, NewQuestion(l, words("batteri", "parisian")), 0); got.Matched != 1 || got.Unknown != 1 || got.Share() != 1 {
		t.Errorf("an unknown word: %+v", got)
	}
	// A word of another passage is known and not held: it lowers the share.
	if got := PassageSupport(l, NewQuestion(l, words("batteri", "tyre")), 0); got.Matched != 1 || got.Share() <= 0 || got.Share() >= 1 {
		t.Errorf("a word of another passage: %+v", got)
	}
	// Too short or only digits: not informative.
	if got := PassageSupport(l, NewQuestion(l, words("km", "80", "batteri")), 0); got.Words != 1 {
		t.Errorf("informative words %+v", got)
	}
	if got := PassageSupport(l, NewQuestion(l, nil), 0); got.Words != 0 || got.Share() != 0 {
		t.Errorf("empty question %+v", got)
	}
	// A compound the corpus lacks counts as one word by its known parts; half when part of it is
	// unknown.
	full := []textproc.Group{{Term: "batterylow", Parts: []string{"batteri", "low"}, Complete: true}}
	if got := PassageSupport(l, NewQuestion(l, full), 0); got.Matched != 1 || got.Share() != 1 {
		t.Errorf("compound of present parts = %+v", got)
	}
	half := []textproc.Group{{Term: "batteryxyz", Parts: []string{"batteri"}, Complete: false}}
	whole := PassageSupport(l, NewQuestion(l, words("batteri")), 0)
	if got := PassageSupport(l, NewQuestion(l, half), 0); got.Matched != 1 || got.Weight != whole.Weight/2 {
		t.Errorf("compound with an unknown part = %+v, want half of %v", got, whole.Weight)
	}
	// A synonym the passage holds stands in for a word it lacks, at SynonymWeight.
	alt := []textproc.Group{{Term: "accu", Alts: []textproc.Alt{{Term: "batteri", Rule: "accu"}}}}
	if got := PassageSupport(l, NewQuestion(l, alt), 0); got.Matched != 1 || got.Weight != lexical.SynonymWeight*whole.Weight {
		t.Errorf("synonym support = %+v, want %v", got, lexical.SynonymWeight*whole.Weight)
	}
	// A word is counted once however often the question repeats it, and a Question whose arrays
	// are reused for another question forgets the first.
	if got := PassageSupport(l, NewQuestion(l, words("batteri", "tyre", "batteri")), 0); got.Words != 2 || got.Matched != 1 {
		t.Errorf("a repeated word: %+v", got)
	}
	reused := AppendQuestion(l, NewQuestion(l, words("tyre", "parisian", "low")), words("batteri", "low"))
	if got, want := PassageSupport(l, reused, 0), PassageSupport(l, NewQuestion(l, words("batteri", "low")), 0); got != want || reused.Words() != 2 {
		t.Errorf("a reused question: %+v, want %+v", got, want)
	}
}
