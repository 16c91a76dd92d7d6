package retrieval

import (
	"fmt"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
)

// A section hit reason names the word as each question wrote it: the kept reasons of one term
// are per spelling, and a term keeps at most maxWrittenReasons of them.
func TestSectionReasonsAreKeptPerSpelling(t *testing.T) {
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	l := lexical.Build(c).Lang("en")
	term, ok := l.Lookup(l.Analyzer.Stem("scratch"))
	if !ok {
		t.Fatal("the embedded corpus has no term for scratch")
	}
	texts := newLangTexts(l)
	for _, written := range []string{"scratches", "scratch", "scratches", "scratched"} {
		if got, want := texts.sectionReason(term, written), reasonSection+written; got != want {
			t.Errorf("sectionReason(%q) = %q, want %q", written, got, want)
		}
	}
	for i := range 2 * maxWrittenReasons {
		texts.sectionReason(term, fmt.Sprintf("scratch%d", i))
	}
	if n := len(*texts.sections[term].Load()); n != maxWrittenReasons {
		t.Errorf("a term keeps %d spellings, want at most %d", n, maxWrittenReasons)
	}
}
