package lexical

import (
	"slices"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// embedded builds a fresh index of the embedded corpus.
func embedded(tb testing.TB) *Index {
	tb.Helper()
	c, err := knowledge.Embedded()
	if err != nil {
		tb.Fatal(err)
	}
	return Build(c)
}

// The index holds every passage's content sentence by sentence, as Sentences splits it: its
// distinct terms in the order the text has them, each with the sentences that hold it, and the
// kinds of fact each sentence states, in a fresh build and in the embedded prebuilt index alike.
// Equal scores keep their order.
func TestFocusSentencesAreThePassagesSentences(t *testing.T) {
	built := embedded(t)
	loaded, _, err := Load(knowledge.EmbeddedIndex(), LoadOptions{Embedded: true})
	if err != nil {
		t.Fatal(err)
	}
	stated, multi := textproc.AnswerKinds(0), 0
	for _, ix := range []*Index{built, loaded} {
		for _, lang := range knowledge.Languages {
			l := ix.Lang(lang)
			if len(l.sent.sentStart) != len(l.Passages)+1 {
				t.Fatalf("%s: sentences of %d passages, want %d", lang, len(l.sent.sentStart)-1, len(l.Passages))
			}
			for p := range l.Passages {
				_, sec := l.Doc(p)
				texts := textproc.Sentences(sec.Content)
				first, n := l.sent.sentStart[p], int(l.sent.sentStart[p+1]-l.sent.sentStart[p])
				if n != len(texts) {
					t.Fatalf("%s passage %d: %d sentences, want %d", lang, p, n, len(texts))
				}
				var terms []Term              // the passage's, in order
				in := map[Term]map[int]bool{} // the sentences of each
				for i, text := range texts {
					for _, w := range l.Text.Terms(text) {
						x, ok := l.Lookup(w)
						if !ok {
							continue
						}
						if in[x] == nil {
							terms = append(terms, x)
							in[x] = map[int]bool{}
						}
						in[x][i] = true
					}
					s := first + uint32(i)
					if got, want := textproc.AnswerKinds(l.sent.sentKinds[s]), textproc.KindsOf(text, textproc.AllKinds); got != want {
						t.Fatalf("%s passage %d sentence %q: kinds %b, want %b", lang, p, text, got, want)
					}
					stated |= textproc.AnswerKinds(l.sent.sentKinds[s])
				}
				got := l.sent.sentTerms[l.sent.sentTermStart[p]:l.sent.sentTermStart[p+1]]
				if !slices.Equal(got, terms) {
					t.Fatalf("%s passage %d: terms %v, want %v", lang, p, got, terms)
				}
				words := l.sent.maskWords(p)
				for j, x := range got {
					for i := range texts {
						bit := l.sent.sentMasks[int(l.sent.maskStart[p])+j*words+i/MaskBits]>>(i%MaskBits)&1 == 1
						if bit != in[x][i] {
							t.Fatalf("%s passage %d: term %d in sentence %d %v, want %v", lang, p, x, i, bit, in[x][i])
						}
					}
					if len(in[x]) > 1 {
						multi++
					}
				}
			}
		}
	}
	if multi == 0 {
		t.Error("no term is in two sentences of a passage: the masks are not exercised")
	}
	if stated != textproc.AllKinds {
		t.Errorf("the corpus's sentences state kinds %b, want every kind %b", stated, textproc.AllKinds)
	}
}
