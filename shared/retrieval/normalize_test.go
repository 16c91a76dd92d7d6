package retrieval_test

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
)

func sources(res lookup.Result) []string {
	var out []string
	for _, b := range res.EvidenceBlocks {
		out = append(out, b.Source)
	}
	return out
}

// Look-alikes of a question (a ligature, fullwidth letters, a soft hyphen or a zero-width
// character inside a word) find the same blocks as the plain question, the providers get it
// normalised, and the trace still hashes the text as received.
func TestScenarioLookAlikesFindTheSameBlocks(t *testing.T) {
	for _, c := range []struct{ lang, plain, lookAlike string }{
		{"en", "I got a speeding fine in the post", "I got a speeding \ufb01ne in the post"},
		{"en", "damage on the rear door", "\uff44\uff41\uff4d\uff41\uff47\uff45 on the rear door"},
		{"en", "damage on the rear door", "dam\u00adage on the rear door"},
		{"en", "damage on the rear door", "dam\u200bage on the re\u200dar do\ufeffor\u2060"},
		{"de", "Schaden an der Tür", "Ｓｃｈａｄｅｎ an der Tu\u0308r"},
	} {
		f := newFixture(t)
		want := f.lookup(t, c.lang, c.plain)
		got := f.lookup(t, c.lang, c.lookAlike)
		if len(sources(want)) == 0 {
			t.Fatalf("%q finds nothing: pick another question", c.plain)
		}
		if !slices.Equal(sources(got), sources(want)) {
			t.Errorf("%q finds %v, %q finds %v", c.lookAlike, sources(got), c.plain, sources(want))
		}
		if !slices.Equal(got.Retrieval.L0.MatchedKeywords, want.Retrieval.L0.MatchedKeywords) {
			t.Errorf("%q matches keywords %v, %q %v", c.lookAlike, got.Retrieval.L0.MatchedKeywords, c.plain, want.Retrieval.L0.MatchedKeywords)
		}
		calls := f.p.calls()
		if q := calls[len(calls)-1].Question; c.lang == "en" && q != c.plain {
			t.Errorf("the provider got %q, want the normalised %q", q, c.plain)
		}
		tr := f.trace(t, got.InvocationID)
		sum := sha256.Sum256([]byte(c.lookAlike))
		if tr.QuestionSHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("question_sha256 of %q is not over the text as received", c.lookAlike)
		}
	}
}
