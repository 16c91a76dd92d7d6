package knowledge

import (
	"bytes"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// Corpus limits from the corpus contract.
const (
	minKeywords = 5
	maxKeywords = 30
	minSections = 4
	minWords    = 400
	maxWords    = 900
)

var (
	// The slugs' lengths are checked apart (validSlug): a bounded repetition such as {3,64}
	// compiles to 64 copies of the class at every cold start.
	idPattern      = regexp.MustCompile(`^[a-z0-9-]+$`)
	versionPattern = regexp.MustCompile(`^[0-9]+(\.[0-9]+)*$`)
	categoryRule   = regexp.MustCompile(`^[a-z0-9-]+$`)
	sectionPattern = regexp.MustCompile(`^## ([0-9]+)\. (\S.*)$`)
	// Personal data the corpus must never carry. Internal four-digit extensions are allowed.
	emailPattern = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)
	phonePattern = regexp.MustCompile(`\+?[0-9][0-9 ()/.-]{6,}[0-9]`)
	datePattern  = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	// A date as German text writes it, "01.12.2026", is not a phone number either.
	dottedDatePattern = regexp.MustCompile(`^[0-9]{1,2}\.[0-9]{1,2}\.[0-9]{4}$`)
	platePattern      = regexp.MustCompile(`\b[A-ZÄÖÜ]{1,3}[- ][A-Z]{1,2} ?[0-9]{1,4}[EH]?\b`)
)

// frontMatterKeys are the keys of the YAML header, in the order docs/corpus.md lists them; any
// other key is rejected.
var frontMatterKeys = []string{"id", "title", "version", "effective_date", "language", "category", "keywords", "entities", "owner"}

// frontMatter is the YAML header, with the line of each value as the file counts it.
type frontMatter struct {
	values map[string]string
	lists  map[string][]string
	// line is the file line of each key's value; itemLine of each list item.
	line     map[string]int
	itemLine map[string][]int
	// tag is the resolved YAML tag of each scalar value ("!!str", "!!float"...).
	tag map[string]string
	// bad marks the keys whose value is reported already (a list where one value belongs...),
	// whose own rule then says nothing more.
	bad map[string]bool
}

func (fm *frontMatter) str(key string) string { return fm.values[key] }

// lineOf is the line of a key's value, or 1 (the opening "---") for a missing key.
func (fm *frontMatter) lineOf(key string) int {
	if n, ok := fm.line[key]; ok {
		return n
	}
	return 1
}

// Parse parses and checks one procedure file. file is its corpus path,
// "procedures/<language>/<id>.md"; the folder and name are part of the rules. Errors name file.
func Parse(file string, raw []byte) (*Document, error) {
	d, _, err := parse(file, file, raw, true)
	return d, err
}

// parse is Parse with shown, the file's path as the user gave it, in the errors; it returns the
// line of the category too, for the checks across languages.
func parse(file, shown string, raw []byte, scanPersonalData bool) (*Document, int, error) {
	f := &faults{file: shown}
	head, body, bodyLine, ok := splitFrontMatter(raw)
	if !ok {
		f.add(1, "front-matter", "the file must start with a YAML front matter block between two '---' lines")
		return nil, 0, f.err()
	}
	fm, ok := decodeFrontMatter(f, head)
	if !ok {
		return nil, 0, f.err()
	}

	lang := path.Base(path.Dir(file))
	name := strings.TrimSuffix(path.Base(file), ".md")
	nameID, nameVersion := fileIdentity(name)
	id, title, version := fm.str("id"), fm.str("title"), fm.str("version")
	check := func(key string) bool { return !fm.bad[key] }
	switch {
	case !check("id"):
	case !validSlug(idPattern, id, 3, 64):
		f.add(fm.lineOf("id"), "id", "id %q must match ^[a-z0-9-]{3,64}$", id)
	case id != nameID:
		f.add(fm.lineOf("id"), "id", "id %q must equal the file name %q", id, nameID)
	}
	if check("title") && strings.TrimSpace(title) == "" {
		f.add(fm.lineOf("title"), "title", "title is required")
	}
	switch tag := fm.tag["version"]; {
	case !check("version"):
	case tag != "!!str":
		f.add(fm.lineOf("version"), "version", "version must be a quoted string such as \"1.3\", got %s", describeTag(tag))
	case !versionPattern.MatchString(version):
		f.add(fm.lineOf("version"), "version", "version %q must be dotted numbers such as \"1.3\"", version)
	case strings.Contains(name, VersionSeparator) && version != nameVersion:
		f.add(fm.lineOf("version"), "version", "version %q must equal the version %q the file name %q names", version, nameVersion, name)
	}
	if _, err := time.Parse(time.DateOnly, fm.str("effective_date")); err != nil && check("effective_date") {
		f.add(fm.lineOf("effective_date"), "effective_date", "effective_date %q must be an ISO date (YYYY-MM-DD)", fm.str("effective_date"))
	}
	if check("language") && fm.str("language") != lang {
		f.add(fm.lineOf("language"), "language", "language %q must match the folder %q", fm.str("language"), lang)
	}
	if check("category") && !validSlug(categoryRule, fm.str("category"), 2, 64) {
		f.add(fm.lineOf("category"), "category", "category %q must be a lowercase slug", fm.str("category"))
	}
	if n := len(fm.lists["keywords"]); check("keywords") && (n < minKeywords || n > maxKeywords) {
		f.add(fm.lineOf("keywords"), "keywords", "%d keywords, want %d..%d", n, minKeywords, maxKeywords)
	}
	checkTerms(f, fm, "keywords")
	if check("entities") && len(fm.lists["entities"]) == 0 {
		f.add(fm.lineOf("entities"), "entities", "at least one entity is required")
	}
	checkTerms(f, fm, "entities")

	// The heading is compared with a title that is there and valid only.
	sections := parseBody(f, title, check("title") && strings.TrimSpace(title) != "", body, bodyLine)
	if n := words(body); n < minWords || n > maxWords {
		f.add(0, "length", "body has %d words, want %d..%d", n, minWords, maxWords)
	}
	if scanPersonalData {
		checkPersonalData(f, raw)
	}
	if err := f.err(); err != nil {
		return nil, 0, err
	}
	return &Document{
		ID: id, Title: title, Version: version, EffectiveDate: fm.str("effective_date"),
		Language: fm.str("language"), Category: fm.str("category"), Keywords: fm.lists["keywords"],
		Entities: fm.lists["entities"], Owner: fm.str("owner"), Path: file, Sections: sections,
		SHA256: hash(raw), Raw: raw,
	}, fm.lineOf("category"), nil
}

// splitFrontMatter returns the YAML between the two '---' lines, the body after them and the
// body's first line as the file counts it.
func splitFrontMatter(raw []byte) (head, body []byte, bodyLine int, ok bool) {
	s := bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n"))
	if !bytes.HasPrefix(s, []byte("---\n")) {
		return nil, nil, 0, false
	}
	rest := s[4:]
	end := bytes.Index(rest, []byte("\n---\n"))
	if end < 0 {
		return nil, nil, 0, false
	}
	head = rest[:end+1]
	// The opening '---', the YAML's lines, the closing '---'.
	return head, rest[end+5:], bytes.Count(head, []byte("\n")) + 3, true
}

// decodeFrontMatter reads the YAML header into fm, reporting each fault at its line: the YAML's
// line 1 is the file's line 2. It fails only when the YAML cannot be read at all.
func decodeFrontMatter(f *faults, head []byte) (*frontMatter, bool) {
	fm := &frontMatter{values: map[string]string{}, lists: map[string][]string{}, line: map[string]int{},
		itemLine: map[string][]int{}, tag: map[string]string{}, bad: map[string]bool{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(head, &doc); err != nil {
		line, msg := yamlError(err)
		f.add(line, "front-matter", "invalid YAML: %s", msg)
		return nil, false
	}
	if doc.Kind == 0 { // empty: every key is missing
		return fm, true
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		f.add(2, "front-matter", "the front matter must be \"key: value\" lines")
		return nil, false
	}
	m := doc.Content[0]
	first := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		key, keyLine := k.Value, k.Line+1
		if !slices.Contains(frontMatterKeys, key) {
			f.add(keyLine, "front-matter", "unknown key %q; the keys are %s", key, strings.Join(frontMatterKeys, ", "))
			continue
		}
		if at, dup := first[key]; dup {
			f.add(keyLine, "front-matter", "key %q is given twice (first on line %d)", key, at)
			fm.bad[key] = true // which of the two is meant is unknown: nothing checks either
			continue
		}
		first[key] = keyLine
		fm.line[key] = v.Line + 1
		if key == "keywords" || key == "entities" {
			switch {
			case v.Kind == yaml.SequenceNode:
				for _, item := range v.Content {
					if item.Kind != yaml.ScalarNode {
						f.add(item.Line+1, key, "each of the %s must be a phrase, not a list or a mapping", key)
						fm.bad[key] = true
						continue
					}
					fm.lists[key] = append(fm.lists[key], item.Value)
					fm.itemLine[key] = append(fm.itemLine[key], item.Line+1)
				}
			case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null":
			default:
				f.add(v.Line+1, key, "%s must be a list of phrases such as [a, b c]", key)
				fm.bad[key] = true
			}
			continue
		}
		if v.Kind != yaml.ScalarNode {
			f.add(v.Line+1, key, "%s must be one value, not a list or a mapping", key)
			fm.bad[key] = true
			continue
		}
		fm.tag[key] = v.ShortTag()
		if v.ShortTag() != "!!null" {
			fm.values[key] = v.Value
		}
	}
	return fm, true
}

// yamlParserProblems are the YAML library's parser errors, whose line it counts from 0 (its
// scanner's errors count from 1).
var yamlParserProblems = []string{"did not find expected <stream-start>", "did not find expected <document start>",
	"did not find expected node content", "did not find expected '-' indicator", "did not find expected key",
	"did not find expected ',' or ']'", "did not find expected ',' or '}'", "found duplicate %YAML directive",
	"found incompatible YAML document", "found undefined tag handle", "found duplicate %TAG directive"}

var yamlLinePattern = regexp.MustCompile(`^yaml: (?:line ([0-9]+): )?(.*)$`)

// yamlError returns the file line and the message of a YAML syntax error of the front matter.
func yamlError(err error) (line int, msg string) {
	m := yamlLinePattern.FindStringSubmatch(err.Error())
	if m == nil {
		return 2, err.Error()
	}
	n, _ := strconv.Atoi(m[1]) // 0 when the library gives no line: its line 0, the first
	msg = m[2]
	if m[1] == "" || slices.Contains(yamlParserProblems, msg) {
		n++
	}
	return n + 1, msg // the opening '---' is line 1
}

func describeTag(tag string) string {
	switch tag {
	case "", "!!null":
		return "nothing"
	case "!!float", "!!int":
		return "a number"
	case "!!bool":
		return "true or false"
	case "!!timestamp":
		return "a date"
	}
	return "a value of type " + strings.TrimPrefix(tag, "!!")
}

func checkTerms(f *faults, fm *frontMatter, key string) {
	seen := map[string]bool{}
	for i, t := range fm.lists[key] {
		line := fm.itemLine[key][i]
		k := strings.ToLower(strings.TrimSpace(t))
		if k == "" {
			f.add(line, key, "blank entry")
			continue
		}
		if seen[k] {
			f.add(line, key, "duplicate entry %q", t)
		}
		seen[k] = true
	}
}

// parseBody checks the "# Title" heading and the numbered sections, and returns the sections.
// first is the body's first line as the file counts it.
func parseBody(f *faults, title string, checkTitle bool, body []byte, first int) []Section {
	lines := strings.Split(string(body), "\n")
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	switch {
	case i < len(lines) && checkTitle && lines[i] == "# "+title, i < len(lines) && !checkTitle && strings.HasPrefix(lines[i], "# "):
		i++
	case checkTitle:
		f.add(first+min(i, len(lines)-1), "heading", "the body must start with the heading %q", "# "+title)
	default:
		f.add(first+min(i, len(lines)-1), "heading", "the body must start with a heading \"# <title>\"")
	}
	var sections []Section
	var headingLine []int
	var content []string
	flush := func() {
		if len(sections) == 0 {
			return
		}
		s := &sections[len(sections)-1]
		s.Content = strings.TrimSpace(strings.Join(content, "\n"))
		if s.Content == "" {
			f.add(headingLine[len(sections)-1], "sections", "section %q has no content", s.Heading)
		}
		content = content[:0]
	}
	anchors := map[string]bool{}
	textBefore := false
	for ; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t")
		if strings.HasPrefix(line, "## ") {
			flush()
			heading := line[3:]
			want := len(sections) + 1
			headingLine = append(headingLine, first+i)
			m := sectionPattern.FindStringSubmatch(line)
			if m == nil {
				// Counted as the section it stands for, so that the next one's number is not
				// reported too.
				f.add(first+i, "sections", "heading %q must read '## %d. Name'", line, want)
				sections = append(sections, Section{Number: want, Heading: heading, Anchor: Anchor(heading)})
				continue
			}
			n, _ := strconv.Atoi(m[1])
			if n != want {
				f.add(first+i, "sections", "section %q is numbered %d, want %d", heading, n, want)
			}
			anchor := Anchor(heading)
			if anchors[anchor] && n == want { // a misnumbered section's anchor is reported as its number
				f.add(first+i, "sections", "two sections share the anchor %q", anchor)
			}
			anchors[anchor] = true
			sections = append(sections, Section{Number: n, Heading: heading, Anchor: anchor})
			continue
		}
		if len(sections) == 0 {
			if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "# ") && !textBefore {
				f.add(first+i, "sections", "text before the first numbered section: %q", clip(line))
				textBefore = true
			}
			continue
		}
		content = append(content, line)
	}
	flush()
	if len(sections) < minSections {
		f.add(0, "sections", "%d numbered sections, want at least %d", len(sections), minSections)
	}
	return sections
}

// Anchor is the GitHub-style anchor of a heading: lowercase, punctuation dropped, spaces as
// hyphens ("2. Immediate actions" -> "2-immediate-actions").
func Anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func words(body []byte) int { return len(strings.Fields(string(body))) }

// checkPersonalData reports e-mail addresses, phone numbers and licence plates, each at its line,
// except on a line that has a fault reported already (a bad date is not also a phone number).
func checkPersonalData(f *faults, raw []byte) {
	text := string(raw)
	lineAt := func(i int) int { return strings.Count(text[:i], "\n") + 1 }
	report := func(i int, format string, m string) {
		if n := lineAt(i); !f.at(n) {
			f.add(n, "personal-data", format, m)
		}
	}
	for _, loc := range emailPattern.FindAllStringIndex(text, -1) {
		report(loc[0], "e-mail address %q", text[loc[0]:loc[1]])
	}
	for _, loc := range phonePattern.FindAllStringIndex(text, -1) {
		m := text[loc[0]:loc[1]]
		digits := 0
		for _, r := range m {
			if r >= '0' && r <= '9' {
				digits++
			}
		}
		if d := strings.TrimSpace(m); digits >= 7 && !datePattern.MatchString(d) && !dottedDatePattern.MatchString(d) {
			report(loc[0], "phone-number-like digits %q (only internal extensions such as 'ext. 4410' are allowed)", m)
		}
	}
	for _, loc := range platePattern.FindAllStringIndex(text, -1) {
		report(loc[0], "licence-plate-like text %q", text[loc[0]:loc[1]])
	}
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// validSlug reports whether s matches pattern and has lo to hi bytes.
func validSlug(pattern *regexp.Regexp, s string, lo, hi int) bool {
	return len(s) >= lo && len(s) <= hi && pattern.MatchString(s)
}
