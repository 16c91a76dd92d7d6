package knowledge

import (
	"bytes"
	"errors"
	"path"
	"regexp"
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
	platePattern = regexp.MustCompile(`\b[A-ZÄÖÜ]{1,3}[- ][A-Z]{1,2} ?[0-9]{1,4}[EH]?\b`)
)

// frontMatter is the YAML header; unknown fields are rejected.
type frontMatter struct {
	ID            string   `yaml:"id"`
	Title         string   `yaml:"title"`
	Version       string   `yaml:"version"`
	EffectiveDate string   `yaml:"effective_date"`
	Language      string   `yaml:"language"`
	Category      string   `yaml:"category"`
	Keywords      []string `yaml:"keywords"`
	Entities      []string `yaml:"entities"`
	Owner         string   `yaml:"owner"`
}

// Parse parses and checks one procedure file. file is its corpus path,
// "procedures/<language>/<id>.md"; the folder and name are part of the rules.
func Parse(file string, raw []byte) (*Document, error) { return parse(file, raw, true) }

func parse(file string, raw []byte, scanPersonalData bool) (*Document, error) {
	var errs []error
	fail := func(rule, format string, args ...any) {
		errs = append(errs, ruleError(file, rule, format, args...))
	}
	head, body, ok := splitFrontMatter(raw)
	if !ok {
		fail("front-matter", "the file must start with a YAML front matter block between two '---' lines")
		return nil, errors.Join(errs...)
	}
	var node yaml.Node
	if err := yaml.Unmarshal(head, &node); err != nil {
		fail("front-matter", "invalid YAML: %v", err)
		return nil, errors.Join(errs...)
	}
	var fm frontMatter
	dec := yaml.NewDecoder(bytes.NewReader(head))
	dec.KnownFields(true)
	if err := dec.Decode(&fm); err != nil {
		fail("front-matter", "%v", err)
		return nil, errors.Join(errs...)
	}

	lang := path.Base(path.Dir(file))
	name := strings.TrimSuffix(path.Base(file), ".md")
	switch {
	case !validSlug(idPattern, fm.ID, 3, 64):
		fail("id", "id %q must match ^[a-z0-9-]{3,64}$", fm.ID)
	case fm.ID != name:
		fail("id", "id %q must equal the file name %q", fm.ID, name)
	}
	if strings.TrimSpace(fm.Title) == "" {
		fail("title", "title is required")
	}
	if tag := valueTag(&node, "version"); tag != "!!str" {
		fail("version", "version must be a quoted string such as \"1.3\", got %s", describeTag(tag))
	} else if !versionPattern.MatchString(fm.Version) {
		fail("version", "version %q must be dotted numbers such as \"1.3\"", fm.Version)
	}
	if _, err := time.Parse(time.DateOnly, fm.EffectiveDate); err != nil {
		fail("effective_date", "effective_date %q must be an ISO date (YYYY-MM-DD)", fm.EffectiveDate)
	}
	if fm.Language != lang {
		fail("language", "language %q must match the folder %q", fm.Language, lang)
	}
	if !validSlug(categoryRule, fm.Category, 2, 64) {
		fail("category", "category %q must be a lowercase slug", fm.Category)
	}
	if n := len(fm.Keywords); n < minKeywords || n > maxKeywords {
		fail("keywords", "%d keywords, want %d..%d", n, minKeywords, maxKeywords)
	}
	checkTerms(fail, "keywords", fm.Keywords)
	if len(fm.Entities) == 0 {
		fail("entities", "at least one entity is required")
	}
	checkTerms(fail, "entities", fm.Entities)

	sections := parseBody(fail, fm.Title, body)
	if n := words(body); n < minWords || n > maxWords {
		fail("length", "body has %d words, want %d..%d", n, minWords, maxWords)
	}
	if scanPersonalData {
		checkPersonalData(fail, raw)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &Document{
		ID: fm.ID, Title: fm.Title, Version: fm.Version, EffectiveDate: fm.EffectiveDate,
		Language: fm.Language, Category: fm.Category, Keywords: fm.Keywords, Entities: fm.Entities,
		Owner: fm.Owner, Path: file, Sections: sections, SHA256: hash(raw), Raw: raw,
	}, nil
}

func splitFrontMatter(raw []byte) (head, body []byte, ok bool) {
	s := bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n"))
	if !bytes.HasPrefix(s, []byte("---\n")) {
		return nil, nil, false
	}
	rest := s[4:]
	end := bytes.Index(rest, []byte("\n---\n"))
	if end < 0 {
		return nil, nil, false
	}
	return rest[:end+1], rest[end+5:], true
}

// valueTag returns the resolved YAML tag of a top-level key's value ("" when absent).
func valueTag(doc *yaml.Node, key string) string {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return ""
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1].ShortTag()
		}
	}
	return ""
}

func describeTag(tag string) string {
	if tag == "" {
		return "nothing"
	}
	return "a value of type " + strings.TrimPrefix(tag, "!!")
}

func checkTerms(fail func(string, string, ...any), rule string, terms []string) {
	seen := map[string]bool{}
	for _, t := range terms {
		k := strings.ToLower(strings.TrimSpace(t))
		if k == "" {
			fail(rule, "blank entry")
			continue
		}
		if seen[k] {
			fail(rule, "duplicate entry %q", t)
		}
		seen[k] = true
	}
}

// parseBody checks the "# Title" heading and the numbered sections, and returns the sections.
func parseBody(fail func(string, string, ...any), title string, body []byte) []Section {
	lines := strings.Split(string(body), "\n")
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) || lines[i] != "# "+title {
		fail("heading", "the body must start with the heading %q", "# "+title)
	} else {
		i++
	}
	var sections []Section
	var content []string
	flush := func() {
		if len(sections) == 0 {
			return
		}
		s := &sections[len(sections)-1]
		s.Content = strings.TrimSpace(strings.Join(content, "\n"))
		if s.Content == "" {
			fail("sections", "section %q has no content", s.Heading)
		}
		content = content[:0]
	}
	anchors := map[string]bool{}
	for ; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t")
		if strings.HasPrefix(line, "## ") {
			flush()
			m := sectionPattern.FindStringSubmatch(line)
			if m == nil {
				fail("sections", "heading %q must read '## N. Name'", line)
				continue
			}
			n, _ := strconv.Atoi(m[1])
			if n != len(sections)+1 {
				fail("sections", "section %q is numbered %d, want %d", line[3:], n, len(sections)+1)
			}
			heading := line[3:]
			anchor := Anchor(heading)
			if anchors[anchor] {
				fail("sections", "two sections share the anchor %q", anchor)
			}
			anchors[anchor] = true
			sections = append(sections, Section{Number: n, Heading: heading, Anchor: anchor})
			continue
		}
		if len(sections) == 0 {
			if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "# ") {
				fail("sections", "text before the first numbered section: %q", clip(line))
			}
			continue
		}
		content = append(content, line)
	}
	flush()
	if len(sections) < minSections {
		fail("sections", "%d numbered sections, want at least %d", len(sections), minSections)
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

func checkPersonalData(fail func(string, string, ...any), raw []byte) {
	text := string(raw)
	if m := emailPattern.FindString(text); m != "" {
		fail("personal-data", "e-mail address %q", m)
	}
	for _, m := range phonePattern.FindAllString(text, -1) {
		digits := 0
		for _, r := range m {
			if r >= '0' && r <= '9' {
				digits++
			}
		}
		if digits >= 7 && !datePattern.MatchString(strings.TrimSpace(m)) {
			fail("personal-data", "phone-number-like digits %q (only internal extensions such as 'ext. 4410' are allowed)", m)
		}
	}
	if m := platePattern.FindString(text); m != "" {
		fail("personal-data", "licence-plate-like text %q", m)
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
