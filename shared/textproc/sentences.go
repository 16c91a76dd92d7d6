package textproc

import "strings"

// Sentences splits text into sentences and list items, each keeping its trailing space or line
// break, so that joining neighbours gives back the original text.
func Sentences(text string) []string {
	var out []string
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
			if strings.TrimSpace(text[start:end]) != "" {
				out = append(out, text[start:end])
			} else if len(out) > 0 {
				out[len(out)-1] += text[start:end]
			}
			start = end
			i = end - 1
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}
