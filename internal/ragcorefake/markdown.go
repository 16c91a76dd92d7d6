package ragcorefake

import "strings"

// section is one "## " section of an uploaded Markdown file.
type section struct {
	heading, content string
}

// splitSections chunks Markdown the way the corpus is written: the YAML front matter is metadata,
// not text, and each "## " heading starts a chunk. Text before the first such heading (the
// "# Title" line) belongs to no chunk. Without any "## " heading the whole body is one chunk with
// an empty heading, so nothing uploaded is silently unretrievable.
func splitSections(markdown string) []section {
	body := stripFrontMatter(strings.ReplaceAll(markdown, "\r\n", "\n"))
	var (
		out     []section
		content []string
		open    bool
	)
	flush := func() {
		if open {
			out[len(out)-1].content = strings.TrimSpace(strings.Join(content, "\n"))
		}
		content = content[:0]
	}
	for line := range strings.SplitSeq(body, "\n") {
		if strings.HasPrefix(line, "## ") {
			flush()
			out = append(out, section{heading: strings.TrimSpace(line[3:])})
			open = true
			continue
		}
		content = append(content, line)
	}
	flush()
	if !open {
		if text := strings.TrimSpace(body); text != "" {
			out = append(out, section{content: text})
		}
	}
	return out
}

// stripFrontMatter drops a leading block between two "---" lines. An unclosed block is not
// front matter, so the text is kept whole.
func stripFrontMatter(s string) string {
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		return s
	}
	if strings.HasPrefix(rest, "---\n") {
		return rest[4:]
	}
	if i := strings.Index(rest, "\n---\n"); i >= 0 {
		return rest[i+5:]
	}
	if strings.HasSuffix(rest, "\n---") {
		return ""
	}
	return s
}
