package textproc

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// AnswerKinds are the kinds of fact a question asks for, as a set of bits: "how long" asks for a
// time limit, "who do I call" for a contact, "is that ok" for a rule. The deciding sentence of a
// procedure often shares no word with the question ("Statusmeldung alle 60 Minuten" for "wie
// oft ... Updates"), so /ask's excerpts and the order of a procedure's sections (Focus) prefer
// the sentences that hold a fact of the kind asked.
type AnswerKinds uint8

const (
	AskDeadline AnswerKinds = 1 << iota
	AskFrequency
	AskAmount
	AskContact
	AskPermission
	AskThreshold

	// AllKinds is every kind.
	AllKinds = AskDeadline | AskFrequency | AskAmount | AskContact | AskPermission | AskThreshold
)

// answerCues are, per kind, phrases of a question that ask for it (lower case, matched on word
// boundaries), and the test of a sentence that answers it (answerscan.go).
var answerCues = []struct {
	kind   AnswerKinds
	cues   []string
	answer func(sentence string) bool
}{
	{AskDeadline, []string{
		"how long", "how fast", "how quickly", "how soon", "by when", "how much time", "deadline",
		"time limit", "how many hours", "how many days", "how many minutes", "when do we have to",
		"when must", "wie lange", "wie schnell", "bis wann", "wie viel zeit", "wieviel zeit", "frist",
		"wann muss", "wann müssen", "wie zügig", "wie viele stunden", "wie viele tage",
	}, statesDeadline},
	{AskFrequency, []string{
		"how often", "how frequently", "how many times", "wie oft", "wie häufig", "in welchem abstand",
		"in welchen abständen",
	}, statesFrequency},
	{AskAmount, []string{
		"how much", "what does it cost", "what do we charge", "cost", "costs", "fee", "fees", "price",
		"wie viel kostet", "was kostet", "wie teuer", "gebühr", "gebühren", "kosten", "kostet",
	}, statesAmount},
	{AskContact, []string{
		"who", "whom", "which number", "what number", "which team", "which department", "wer", "wen",
		"wem", "welche nummer", "welche durchwahl", "an wen", "welches team", "welche abteilung",
	}, statesContact},
	{AskPermission, []string{
		"allowed", "is that ok", "is it ok", "is that okay", "is it okay", "ok?", "okay?", "may he",
		"may she", "may they", "may we", "may i", "permitted", "darf", "dürfen", "erlaubt", "geht das klar",
		"ist das ok", "ist das okay", "ist das in ordnung", "geht das?",
	}, statesPermission},
	{AskThreshold, []string{
		"what percent", "how many percent", "which percentage", "battery level", "what level", "how low",
		"minimum", "wie viel prozent", "wieviel prozent", "ab wie viel", "ab welchem", "mindestens",
	}, statesThreshold},
}

// QuestionKinds returns the kinds of fact a question asks for (none when it does not say): a
// cue counts where it starts a word and ends one (or ends in punctuation, "ok?"). Each word of
// the question that may start a cue (cueLengths) looks up the cues that start with it, so the
// cost follows the question's length, not the number of cues.
func QuestionKinds(question string) AnswerKinds {
	// An ASCII question of the API's length, or another of half of it, is lowered on the stack:
	// strings.ToLower would make a copy on every lookup (one of a lookup's allocations).
	var buf [1024]byte
	if len(question) <= len(buf) && isASCII(question) {
		b := buf[:len(question)]
		for i := range len(question) {
			c := question[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b[i] = c
		}
		return questionKinds(b)
	}
	if len(question) <= len(buf)/2 {
		// As strings.ToLower lowers it (strings.Map with unicode.ToLower: an invalid byte becomes
		// U+FFFD). A valid rune's lower case is at most half as long again as the rune (U+023A,
		// two bytes, lowers to U+2C65, three), so a valid question of half the buffer fits it;
		// append grows the array for any other.
		b := buf[:0]
		for _, r := range question {
			b = utf8.AppendRune(b, unicode.ToLower(r))
		}
		return questionKinds(b)
	}
	return questionKinds(strings.ToLower(question))
}

// questionKinds is QuestionKinds of a question lowered.
func questionKinds[S string | []byte](q S) AnswerKinds {
	var k AnswerKinds
	for i := 0; i < len(q); i++ {
		if !isWordByte(q[i]) || (i > 0 && isWordByte(q[i-1])) {
			continue
		}
		j := i
		for j < len(q) && isWordByte(q[j]) {
			j++
		}
		if cueLengths[q[i]]&(1<<min(j-i, 63)) == 0 {
			i = j
			continue // no cue's first word has this first byte and length
		}
		for _, c := range cuesByWord[string(q[i:j])] {
			end := i + len(c.cue)
			if k&c.kind == 0 && end <= len(q) && string(q[i:end]) == c.cue &&
				(end == len(q) || !isWordByte(q[end]) || !isWordByte(c.cue[len(c.cue)-1])) {
				k |= c.kind
			}
		}
		i = j
	}
	return k
}

// kindCue is one cue of answerCues with its kind.
type kindCue struct {
	cue  string
	kind AnswerKinds
}

// cuesByWord lists answerCues' cues by their first word.
var cuesByWord = func() map[string][]kindCue {
	m := map[string][]kindCue{}
	for _, c := range answerCues {
		for _, cue := range c.cues {
			n := 0
			for n < len(cue) && isWordByte(cue[n]) {
				n++
			}
			m[cue[:n]] = append(m[cue[:n]], kindCue{cue, c.kind})
		}
	}
	return m
}()

// cueLengths has, for each first byte of a cue's first word, bit n set when a first word of n
// bytes (63 for longer ones) starts with it: most words of a question are ruled out by it before
// the map is asked.
var cueLengths = func() (m [256]uint64) {
	for w := range cuesByWord {
		m[w[0]] |= 1 << min(len(w), 63)
	}
	return m
}()

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80
}

// Answers reports whether a sentence holds a fact of one of the kinds.
func (k AnswerKinds) Answers(sentence string) bool {
	for _, c := range answerCues {
		if k&c.kind != 0 && c.answer(sentence) {
			return true
		}
	}
	return false
}

// KindsOf returns which of kinds a sentence states.
func KindsOf(sentence string, kinds AnswerKinds) AnswerKinds {
	var k AnswerKinds
	for _, c := range answerCues {
		if kinds&c.kind != 0 && c.answer(sentence) {
			k |= c.kind
		}
	}
	return k
}
