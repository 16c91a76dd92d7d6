// Package synonyms reads synonym files in the Solr/Elasticsearch synonym format and matches their
// rules against the folded tokens of a question, so that a lexical retriever can add the
// procedures' words for the words operators use ("Handy" for "Smartphone", "phone died" for
// "low battery").
//
// One rule a line:
//
//	a, b, c        equivalent terms: each one expands to the others
//	x, y => z, w   explicit mapping: x or y expands to z and w
//
// A term may have several words ("phone died"). "#" starts a comment, blank lines are ignored.
// Parse checks every line and names the file and line of each error; a Set holds the rules of
// one or more files, and Compile turns it into a Matcher for one language's tokenizer.
package synonyms

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of a synonym file. They keep a broken or hostile file from making a function slow to
// start or a question slow to expand.
const (
	// MaxLineBytes is the longest line, comment included.
	MaxLineBytes = 1024
	// MaxTermBytes is the longest term, after trimming and collapsing its spaces.
	MaxTermBytes = 64
	// MaxTermsPerRule bounds the terms on both sides of one rule together.
	MaxTermsPerRule = 32
	// MaxRules bounds the rules of one file.
	MaxRules = 10000
	// maxErrors is how many line errors Parse reports before it stops reading.
	maxErrors = 20
)

// Rule is one line of a synonym file.
type Rule struct {
	// Source is "<file>:<line>", e.g. "synonyms/de/operators.txt:12".
	Source string
	// Terms are the equivalent terms of an equivalence rule, or the left-hand side of a mapping,
	// as written with their spaces collapsed.
	Terms []string
	// Targets are the right-hand side of a mapping; nil for an equivalence rule.
	Targets []string
}

// Mapping reports whether r is an explicit mapping ("x => y") rather than an equivalence.
func (r Rule) Mapping() bool { return r.Targets != nil }

// String writes r back in the file format.
func (r Rule) String() string {
	s := strings.Join(r.Terms, ", ")
	if r.Mapping() {
		s += " => " + strings.Join(r.Targets, ", ")
	}
	return s
}

// Set is the rules of one or more synonym files, in file and line order. It is read-only once
// built.
type Set struct {
	rules []Rule
}

// Rules returns the rules in order. The slice must not be modified.
func (s *Set) Rules() []Rule {
	if s == nil {
		return nil
	}
	return s.rules
}

// Len is the number of rules.
func (s *Set) Len() int { return len(s.Rules()) }

// Merge returns a set with the rules of every set in order; nil sets are skipped.
func Merge(sets ...*Set) *Set {
	out := &Set{}
	for _, s := range sets {
		out.rules = append(out.rules, s.Rules()...)
	}
	return out
}

// Select returns a set with the rules for which keep is true, in order: for example the curated
// files only, by their Source.
func (s *Set) Select(keep func(Rule) bool) *Set {
	out := &Set{}
	for _, r := range s.Rules() {
		if keep(r) {
			out.rules = append(out.rules, r)
		}
	}
	return out
}

// Error is an invalid line of a synonym file.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Parse reads a synonym file. name is used in errors and rule sources. Every line is checked;
// the returned error joins one *Error per invalid line (at most 20, then reading stops), and
// no rules are returned with it.
func Parse(name string, r io.Reader) (*Set, error) {
	set := &Set{}
	var errs []error
	fail := func(line int, format string, args ...any) {
		errs = append(errs, &Error{File: name, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	br := bufio.NewReaderSize(r, MaxLineBytes+2) // the line and its "\r\n"
	for n := 1; len(errs) < maxErrors; n++ {
		raw, err := readLine(br)
		if errors.Is(err, errLineTooLong) {
			fail(n, "line longer than %d bytes", MaxLineBytes)
			break // the rest of the line cannot be told from the next one
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if raw != nil {
			if n == 1 {
				raw = bytes.TrimPrefix(raw, []byte("\ufeff"))
			}
			rule, msg := parseLine(string(raw))
			switch {
			case msg != "":
				fail(n, "%s", msg)
			case rule != nil:
				if len(set.rules) == MaxRules {
					fail(n, "more than %d rules", MaxRules)
					break
				}
				rule.Source = name + ":" + strconv.Itoa(n)
				set.rules = append(set.rules, *rule)
			}
		}
		if err != nil { // io.EOF
			break
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return set, nil
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its "\n" or "\r\n", or nil with io.EOF at the end.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) || len(bytes.TrimRight(line, "\r\n")) > MaxLineBytes {
		return nil, errLineTooLong
	}
	if err != nil && len(line) == 0 {
		return nil, err
	}
	return bytes.TrimRight(line, "\r\n"), err
}

// parseLine returns the rule of one line, nil for a blank or comment line, or an error message.
func parseLine(line string) (*Rule, string) {
	if !utf8.ValidString(line) {
		return nil, "not valid UTF-8"
	}
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	if strings.TrimSpace(line) == "" {
		return nil, ""
	}
	sides := strings.Split(line, "=>")
	if len(sides) > 2 {
		return nil, `"=>" more than once`
	}
	left, msg := parseTerms(sides[0], ` before "=>"`, len(sides) == 2)
	if msg != "" {
		return nil, msg
	}
	rule := &Rule{Terms: left}
	if len(sides) == 2 {
		right, msg := parseTerms(sides[1], ` after "=>"`, true)
		if msg != "" {
			return nil, msg
		}
		rule.Targets = right
	} else if len(left) < 2 {
		return nil, fmt.Sprintf(`one term %q and no "=>": a rule needs two equivalent terms or a mapping`, left[0])
	}
	if len(rule.Terms)+len(rule.Targets) > MaxTermsPerRule {
		return nil, fmt.Sprintf("more than %d terms in one rule", MaxTermsPerRule)
	}
	return rule, ""
}

// parseTerms splits one side of a rule at its commas. where ("before/after =>") is added to the
// message of an empty term when the rule is a mapping.
func parseTerms(side, where string, mapping bool) ([]string, string) {
	if !mapping {
		where = ""
	}
	terms := make([]string, 0, strings.Count(side, ",")+1)
	for p := range strings.SplitSeq(side, ",") {
		t := collapse(p)
		if t == "" {
			return nil, "empty term" + where
		}
		if msg := checkTerm(t); msg != "" {
			return nil, msg
		}
		terms = append(terms, t)
	}
	return terms, ""
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' }

// collapse trims p and turns each run of spaces and tabs inside it into one space. A term
// written with single spaces, the usual case, is returned without a copy.
func collapse(p string) string {
	t := strings.Trim(p, " \t")
	if !strings.Contains(t, "  ") && !strings.Contains(t, "\t") {
		return t
	}
	return strings.Join(strings.FieldsFunc(t, isSpace), " ")
}

// CheckTerm reports whether t can be a term of a rule as it stands: letters, digits, single
// spaces, hyphens and apostrophes, at least one letter or digit, at most MaxTermBytes bytes.
func CheckTerm(t string) error {
	if t != strings.Join(strings.FieldsFunc(t, isSpace), " ") {
		return fmt.Errorf("term %q: spaces at its ends or twice in a row", t)
	}
	if t == "" {
		return errors.New("empty term")
	}
	if msg := checkTerm(t); msg != "" {
		return errors.New(msg)
	}
	return nil
}

// checkTerm allows letters, digits, spaces, hyphens and apostrophes, and needs a letter or digit.
func checkTerm(t string) string {
	if len(t) > MaxTermBytes {
		cut := MaxTermBytes
		for !utf8.RuneStart(t[cut]) {
			cut--
		}
		return fmt.Sprintf("term %q longer than %d bytes", t[:cut]+"...", MaxTermBytes)
	}
	word := false
	for _, r := range t {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			word = true
		case r == ' ' || r == '-' || r == '\'' || r == '\u2019':
		default:
			return fmt.Sprintf("term %q: character %q is not a letter, digit, space, hyphen or apostrophe", t, r)
		}
	}
	if !word {
		return fmt.Sprintf("term %q has no letter or digit", t)
	}
	return ""
}
