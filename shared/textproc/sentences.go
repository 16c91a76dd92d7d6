package textproc

import (
	"iter"
	"strings"
	"unicode/utf8"
)

// Sentences splits text into sentences and list items, each keeping its trailing space or line
// break, so that joining neighbours gives back the original text.
func Sentences(text string) []string {
	var out []string
	pieces(text, func(start, end int, blank bool) {
		switch {
		case !blank:
			out = append(out, text[start:end])
		case len(out) > 0:
			out[len(out)-1] += text[start:end]
		}
	})
	return out
}

// pieces calls piece with the byte range of each piece Sentences cuts (a sentence or list item
// with its trailing space or line break), blank for a piece of spaces alone (which Sentences
// adds to the piece before it). The last piece, whatever it holds, is never blank.
func pieces(text string, piece func(start, end int, blank bool)) {
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		end := -1
		switch {
		case c == '\n':
			end = i + 1
		case (c == '.' || c == '?' || c == '!') && i+1 < len(text) && text[i+1] == ' ':
			end = i + 2
		}
		if end > 0 {
			piece(start, end, strings.TrimSpace(text[start:end]) == "")
			start = end
			i = end - 1
		}
	}
	if start < len(text) {
		piece(start, len(text), false)
	}
}

// WholeSentences yields the byte range of each of text's sentences: the pieces Sentences cuts
// with the cuts that end no sentence undone, so that a sentence never ends after an abbreviation
// ("ext.", "bzw.", "z. B.", "e.g.") or after a numbered list item's number ("2."), the piece
// going on with the next. Every byte of text but leading spaces is in one range.
func WholeSentences(text string) iter.Seq2[int, int] {
	return func(yield func(start, end int) bool) {
		from, to, stopped := -1, -1, false
		pieces(text, func(start, end int, blank bool) {
			switch {
			case stopped:
			case from >= 0 && (blank || !endsSentence(text[from:to])):
				to = end
			case blank: // spaces before the first sentence
			default:
				if from >= 0 && !yield(from, to) {
					stopped = true
					return
				}
				from, to = start, end
			}
		})
		if !stopped && from >= 0 {
			yield(from, to)
		}
	}
}

// endsSentence reports whether a piece Sentences cut ends a sentence: it ends a line, or its
// last word is not an abbreviation, a single letter or a list item's number.
func endsSentence(piece string) bool {
	if strings.HasSuffix(piece, "\n") {
		return true
	}
	t := strings.TrimRight(piece, " ")
	if !strings.HasSuffix(t, ".") {
		return true // "?" or "!"
	}
	word := strings.ToLower(t[strings.LastIndexAny(t, " \n(")+1 : len(t)-1])
	switch {
	case word == "":
		return true
	case strings.Contains(word, "."), utf8.RuneCountInString(word) == 1, abbreviations[word]:
		return false // "e.g.", "z. B.", "ext."
	case strings.Trim(word, "0123456789") == "" && strings.TrimSpace(t) == word+".":
		return false // "2. " opening a numbered item
	}
	return true
}

// abbreviations are the words the procedures abbreviate with a full stop inside a sentence.
var abbreviations = map[string]bool{
	"ext": true, "bzw": true, "max": true, "min": true, "ca": true, "nr": true, "tel": true, "inkl": true,
	"ggf": true, "evtl": true, "usw": true, "vgl": true, "approx": true, "vs": true, "dr": true, "str": true,
}
