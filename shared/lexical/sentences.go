package lexical

import "github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"

// sentenceIndex is, per passage, its content's sentences as Focus reads them, analysed when the
// index is built (see sentences). Passage p's sentences are [sentStart[p], sentStart[p+1]),
// sentence s stating the kinds of fact sentKinds[s]. The distinct terms of its sentences, in the
// order they first occur, are sentTerms[sentTermStart[p]:sentTermStart[p+1]]; term i of them is
// in the sentences whose bits are set in its maskWords(p) words from
// sentMasks[maskStart[p]+i*maskWords(p)] (bit j of word k: sentence 16k+j of the passage; most
// passages have at most 16 sentences, so one word).
type sentenceIndex struct {
	sentStart     []uint32
	sentKinds     []uint16
	sentTermStart []uint32
	sentTerms     []Term
	maskStart     []uint32
	sentMasks     []uint16
}

// maskBits is how many sentences one word of a sentence mask covers.
const maskBits = 16

// maskWords is how many words each of passage p's sentence masks has.
func (l *Lang) maskWords(p int) int {
	return (int(l.sentStart[p+1]-l.sentStart[p]) + maskBits - 1) / maskBits
}

// sentences fills, for Focus, every passage's sentence arrays from the analysed documents:
// each sentence's distinct terms and the kinds of fact it states. They are part of the build,
// and of the prebuilt index, so that no lookup analyses a passage (about 0.15 ms a passage,
// were it done on first use) and nothing grows with the questions asked.
func (l *Lang) sentences(all []analysed) {
	P := len(l.Passages)
	l.sentStart = make([]uint32, 0, P+1)
	l.sentTermStart = make([]uint32, 0, P+1)
	l.maskStart = make([]uint32, 0, P+1)
	// slot[t] is term t's index among the current passage's terms plus one, 0 when it has none.
	slot := make([]uint32, len(l.terms.words))
	for _, an := range all {
		for si, texts := range an.sentences {
			l.sentStart = append(l.sentStart, uint32(len(l.sentKinds)))
			l.sentTermStart = append(l.sentTermStart, uint32(len(l.sentTerms)))
			l.maskStart = append(l.maskStart, uint32(len(l.sentMasks)))
			bounds := an.bounds[si]
			words := (len(texts) + maskBits - 1) / maskBits
			first := len(l.sentTerms)
			var masks []uint16 // words per term of the passage, in the order of sentTerms
			for i, text := range texts {
				for _, w := range an.passages[si][bounds[i]:bounds[i+1]] {
					t := l.terms.ids[w]
					if slot[t] == 0 {
						l.sentTerms = append(l.sentTerms, t)
						slot[t] = uint32(len(l.sentTerms) - first)
						masks = append(masks, make([]uint16, words)...)
					}
					masks[int(slot[t]-1)*words+i/maskBits] |= 1 << (i % maskBits)
				}
				l.sentKinds = append(l.sentKinds, uint16(textproc.KindsOf(text, textproc.AllKinds)))
			}
			for _, t := range l.sentTerms[first:] {
				slot[t] = 0
			}
			l.sentMasks = append(l.sentMasks, masks...)
		}
	}
	l.sentStart = append(l.sentStart, uint32(len(l.sentKinds)))
	l.sentTermStart = append(l.sentTermStart, uint32(len(l.sentTerms)))
	l.maskStart = append(l.maskStart, uint32(len(l.sentMasks)))
}
