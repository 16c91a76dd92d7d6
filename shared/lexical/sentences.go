package lexical

import "github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"

// SentenceIndex is the index part of every passage's content sentences as judge.Focus reads them,
// analysed when the index is built (see build). Passage p's sentences are
// [sentStart[p], sentStart[p+1]), sentence s stating the kinds of fact sentKinds[s]. The distinct
// terms of its sentences, in the order they first occur, are
// sentTerms[sentTermStart[p]:sentTermStart[p+1]]; term i of them is in the sentences whose bits
// are set in its maskWords(p) words from sentMasks[maskStart[p]+i*maskWords(p)] (bit j of word
// k: sentence 16k+j of the passage; most passages have at most 16 sentences, so one word). It
// owns its build, its prebuilt form (encode, decode) and its check.
type SentenceIndex struct {
	sentStart     []uint32
	sentKinds     []uint16
	sentTermStart []uint32
	sentTerms     []Term
	maskStart     []uint32
	sentMasks     []uint16
}

// SentenceIndex returns the language's sentences.
func (l *Lang) SentenceIndex() *SentenceIndex { return &l.sent }

// MaskBits is how many sentences one word of a sentence mask covers.
const MaskBits = 16

// maskWords is how many words each of passage p's sentence masks has.
func (x *SentenceIndex) maskWords(p int) int {
	return (int(x.sentStart[p+1]-x.sentStart[p]) + MaskBits - 1) / MaskBits
}

// Passage returns passage p's sentences: the kinds of fact each states (textproc.AnswerKinds),
// the distinct terms they hold, and for term i the words masks[i*words:(i+1)*words] whose bits
// are the sentences holding it (bit j of word k: sentence MaskBits*k+j).
func (x *SentenceIndex) Passage(p int) (kinds []uint16, terms []Term, masks []uint16, words int) {
	return x.sentKinds[x.sentStart[p]:x.sentStart[p+1]], x.sentTerms[x.sentTermStart[p]:x.sentTermStart[p+1]],
		x.sentMasks[x.maskStart[p]:x.maskStart[p+1]], x.maskWords(p)
}

// build fills every passage's sentence arrays from the analysed documents (P passages over a
// vocabulary terms): each sentence's distinct terms and the kinds of fact it states. They are
// part of the build, and of the prebuilt index, so that no lookup analyses a passage (about
// 0.15 ms a passage, were it done on first use) and nothing grows with the questions asked.
func (x *SentenceIndex) build(all []analysed, terms termTable, P int) {
	x.sentStart = make([]uint32, 0, P+1)
	x.sentTermStart = make([]uint32, 0, P+1)
	x.maskStart = make([]uint32, 0, P+1)
	// slot[t] is term t's index among the current passage's terms plus one, 0 when it has none.
	slot := make([]uint32, len(terms.words))
	for _, an := range all {
		for si, texts := range an.sentences {
			x.sentStart = append(x.sentStart, uint32(len(x.sentKinds)))
			x.sentTermStart = append(x.sentTermStart, uint32(len(x.sentTerms)))
			x.maskStart = append(x.maskStart, uint32(len(x.sentMasks)))
			bounds := an.bounds[si]
			words := (len(texts) + MaskBits - 1) / MaskBits
			first := len(x.sentTerms)
			var masks []uint16 // words per term of the passage, in the order of sentTerms
			for i, text := range texts {
				for _, w := range an.passages[si][bounds[i]:bounds[i+1]] {
					t := terms.ids[w]
					if slot[t] == 0 {
						x.sentTerms = append(x.sentTerms, t)
						slot[t] = uint32(len(x.sentTerms) - first)
						masks = append(masks, make([]uint16, words)...)
					}
					masks[int(slot[t]-1)*words+i/MaskBits] |= 1 << (i % MaskBits)
				}
				x.sentKinds = append(x.sentKinds, uint16(textproc.KindsOf(text, textproc.AllKinds)))
			}
			for _, t := range x.sentTerms[first:] {
				slot[t] = 0
			}
			x.sentMasks = append(x.sentMasks, masks...)
		}
	}
	x.sentStart = append(x.sentStart, uint32(len(x.sentKinds)))
	x.sentTermStart = append(x.sentTermStart, uint32(len(x.sentTerms)))
	x.maskStart = append(x.maskStart, uint32(len(x.sentMasks)))
}

// encode writes the sentences.
func (x *SentenceIndex) encode(e *encoder) {
	e.u32s(x.sentStart)
	e.u16s(x.sentKinds)
	e.u32s(x.sentTermStart)
	e.terms(x.sentTerms)
	e.u32s(x.maskStart)
	e.u16s(x.sentMasks)
}

// decode reads what encode wrote.
func (x *SentenceIndex) decode(d *decoder) {
	x.sentStart, x.sentKinds, x.sentTermStart, x.sentTerms = d.u32s(), d.u16s(), d.u32s(), d.terms()
	x.maskStart, x.sentMasks = d.u32s(), d.u16s()
}

// check verifies the decoded sentences against a vocabulary of V terms and P passages: offsets
// and ids in range, and each of a passage's terms with one mask of its sentences, naming only
// sentences the passage has.
func (x *SentenceIndex) check(V, P int) error {
	if !offsetsTo(x.sentStart, P, len(x.sentKinds)) || !offsetsTo(x.sentTermStart, P, len(x.sentTerms)) ||
		!idsBelow(x.sentTerms, V) || !offsetsTo(x.maskStart, P, len(x.sentMasks)) {
		return badPrebuilt("sentences")
	}
	for p := range P {
		n, words := int(x.sentStart[p+1]-x.sentStart[p]), x.maskWords(p)
		terms := int(x.sentTermStart[p+1] - x.sentTermStart[p])
		masks := x.sentMasks[x.maskStart[p]:x.maskStart[p+1]]
		if len(masks) != terms*words {
			return badPrebuilt("sentence masks")
		}
		if r := n % MaskBits; r != 0 {
			for i := words - 1; i < len(masks); i += words {
				if masks[i]>>r != 0 {
					return badPrebuilt("sentence masks")
				}
			}
		}
	}
	return nil
}
