// Command synonyms-build writes the generated synonym files of the corpus from two thesauri:
// knowledge/synonyms/en/wordnet.txt from WordNet 3.0 and knowledge/synonyms/de/openthesaurus.txt
// from OpenThesaurus. Run it from the repository root with `make synonyms`; its output is
// committed, so building and testing the service never need the thesauri.
//
// A synset is kept only when at least one of its members occurs in the procedures of that
// language (compared folded and stemmed with the project's analyzer, a multi-word member as a
// sequence of words; see vocabulary.occurs). Its rule maps the other members onto those corpus members:
//
//	member1, member2 => corpusword
//
// A member is left out when it is ambiguous or too generic: it has more senses than -max-senses
// (WordNet: senses over all parts of speech; OpenThesaurus: synsets it is a member of), it is
// shorter than -min-len bytes, it is a proper noun, or its label marks it as dated or
// figurative. A corpus member anchors a synset only when that synset is its most frequent
// sense in its main part of speech (WordNet) or it has at most -max-senses senses itself.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/synonyms"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

func main() {
	wordnet := flag.String("wordnet", "/usr/share/wordnet", "folder of the WordNet 3.0 data.* and index.* files (Debian package wordnet-base)")
	thesaurus := flag.String("openthesaurus", "/usr/share/openthesaurus-de/openthesaurus.txt", "the OpenThesaurus text file (Debian package openthesaurus-de-text)")
	corpus := flag.String("corpus", "knowledge/procedures", "folder of the procedures, <language>/<id>.md")
	out := flag.String("out", "knowledge/synonyms", "folder the files are written to, <language>/<name>.txt")
	opt := options{}
	flag.IntVar(&opt.maxSenses, "max-senses", 3, "leave out members with more senses than this")
	flag.IntVar(&opt.minLen, "min-len", 4, "leave out members shorter than this, in bytes of folded text")
	flag.IntVar(&opt.maxMembers, "max-members", 16, "leave out synsets with more members than this")
	flag.Parse()
	if err := run(*wordnet, *thesaurus, *corpus, *out, opt); err != nil {
		fmt.Fprintln(os.Stderr, "synonyms-build:", err)
		os.Exit(1)
	}
}

type options struct {
	maxSenses  int
	minLen     int
	maxMembers int
}

func run(wordnet, thesaurus, corpusDir, out string, opt options) error {
	c, err := knowledge.LoadDir(corpusDir)
	if err != nil {
		return err
	}
	wn, err := readWordNet(wordnet)
	if err != nil {
		return fmt.Errorf("WordNet: %w (install the Debian package wordnet-base)", err)
	}
	en := newVocabulary("en", c.Documents("en"))
	rules := wn.rules(en, opt)
	if err := write(filepath.Join(out, "en", "wordnet.txt"), wordnetHeader(opt), rules); err != nil {
		return err
	}
	ot, err := readOpenThesaurus(thesaurus)
	if err != nil {
		return fmt.Errorf("OpenThesaurus: %w (install the Debian package openthesaurus-de-text)", err)
	}
	de := newVocabulary("de", c.Documents("de"))
	rules = ot.rules(de, opt)
	return write(filepath.Join(out, "de", "openthesaurus.txt"), openThesaurusHeader(opt, ot.generated), rules)
}

// vocabulary is the words of one language's procedures, folded and stemmed.
type vocabulary struct {
	a *textproc.Analyzer
	// stems maps each stem to the length of the longest folded word of the procedures with it.
	stems map[string]int
	// cases records, for German, whether the procedures' running text writes a stem's words
	// with a small initial (caseLower), a capital one (caseUpper) or both: German capitalises
	// nouns, so "Panne" (breakdown) is not the adjective "panne" (silly) of a thesaurus.
	cases map[string]uint8
	// text is every text of the procedures as stems between single spaces, with a space at
	// both ends, for finding a multi-word member as a sequence.
	text string
}

func newVocabulary(lang string, docs []*knowledge.Document) *vocabulary {
	v := &vocabulary{a: textproc.New(lang), stems: map[string]int{}}
	if lang == "de" {
		v.cases = map[string]uint8{}
	}
	var b strings.Builder
	b.WriteByte(' ')
	add := func(text string) {
		for _, tok := range v.a.Tokens(text) {
			s := v.a.Stem(tok)
			v.stems[s] = max(v.stems[s], len(tok))
			b.WriteString(s)
			b.WriteByte(' ')
		}
		b.WriteString("| ") // no sequence runs from one text into the next
	}
	running := func(text string) {
		add(text)
		if v.cases == nil {
			return
		}
		for _, w := range rawWords(text) {
			v.cases[v.a.Stem(v.a.Fold(w))] |= caseOf(w)
		}
	}
	for _, d := range docs {
		running(d.Title)
		for _, k := range d.Keywords { // written in lower case whatever their part of speech
			add(k)
		}
		for _, e := range d.Entities {
			add(e)
		}
		for _, s := range d.Sections {
			running(s.Heading)
			running(s.Content)
		}
	}
	v.text = b.String()
	return v
}

const (
	caseLower uint8 = 1 << iota
	caseUpper
)

// rawWords splits text into words of letters and digits, as written.
func rawWords(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// caseOf is the case of w's initial, 0 when it is not a letter.
func caseOf(w string) uint8 {
	r, _ := utf8.DecodeRuneInString(w)
	switch {
	case unicode.IsUpper(r):
		return caseUpper
	case unicode.IsLetter(r):
		return caseLower
	}
	return 0
}

// stemsOf returns the folded, stemmed words of term.
func (v *vocabulary) stemsOf(term string) []string {
	toks := v.a.Tokens(term)
	for i, t := range toks {
		toks[i] = v.a.Stem(t)
	}
	return toks
}

// occurs reports whether term is a valid term made of a word of the procedures, or of a
// sequence of their words. Words are compared by stem, and a word counts only when the
// procedures have a word with its stem at least as long: "investigate" is found by
// "investigated", but "dogged" is not found by "dog" nor "lettered" by "letter", which are
// other words. In German, the initial of each word must be written in the same case somewhere
// in the procedures' running text. A single stop word or a word of fewer than three letters does not count.
func (v *vocabulary) occurs(term string) bool {
	if synonyms.CheckTerm(term) != nil {
		return false
	}
	toks := v.a.Tokens(term)
	if len(toks) == 0 || len(toks) == 1 && (len(toks[0]) < 3 || v.a.IsStop(toks[0])) {
		return false
	}
	for _, t := range toks {
		if n, ok := v.stems[v.a.Stem(t)]; !ok || n < len(t) {
			return false
		}
	}
	if v.cases != nil {
		for _, w := range rawWords(term) {
			if c := caseOf(w); c != 0 && v.cases[v.a.Stem(v.a.Fold(w))]&c == 0 {
				return false
			}
		}
	}
	return len(toks) == 1 || strings.Contains(v.text, " "+strings.Join(v.stemsOf(term), " ")+" ")
}

// usable reports whether a member that does not occur in the corpus may be mapped onto one
// that does: a valid term, not a stop word, long enough.
func (v *vocabulary) usable(term string, opt options) bool {
	if synonyms.CheckTerm(term) != nil {
		return false
	}
	toks := v.a.Tokens(term)
	if len(toks) == 0 || len(strings.Join(toks, " ")) < opt.minLen {
		return false
	}
	return len(toks) > 1 || !v.a.IsStop(toks[0])
}

// rule is one generated line: sources => targets, both sorted.
type rule struct{ sources, targets []string }

// makeRule builds the rule of one synset from its members: anchors are the corpus members,
// sources the rest; a source whose stems equal an anchor's is dropped. It returns false when
// nothing is left on either side.
func makeRule(v *vocabulary, anchors, sources []string) (rule, bool) {
	anchors = dedupe(v, anchors, nil)
	sources = dedupe(v, sources, anchors)
	return rule{sources: sources, targets: anchors}, len(anchors) > 0 && len(sources) > 0
}

// dedupe sorts terms and drops those whose folded, stemmed words repeat another's or one of
// skip's.
func dedupe(v *vocabulary, terms, skip []string) []string {
	seen := map[string]bool{}
	for _, t := range skip {
		seen[strings.Join(v.stemsOf(t), " ")] = true
	}
	slices.Sort(terms)
	var out []string
	for _, t := range terms {
		k := strings.Join(v.stemsOf(t), " ")
		if !seen[k] {
			seen[k] = true
			out = append(out, t)
		}
	}
	return out
}

// lines turns rules into sorted, unique lines, splitting a rule with more terms than a line may
// have into several.
func lines(rules []rule) []string {
	set := map[string]bool{}
	for _, r := range rules {
		room := synonyms.MaxTermsPerRule - len(r.targets)
		if room < 1 {
			r.targets, room = r.targets[:synonyms.MaxTermsPerRule-1], 1
		}
		for i := 0; i < len(r.sources); i += room {
			src := r.sources[i:min(i+room, len(r.sources))]
			set[strings.Join(src, ", ")+" => "+strings.Join(r.targets, ", ")] = true
		}
	}
	out := make([]string, 0, len(set))
	for l := range set {
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b string) int {
		// by target, then by sources, so that the rules of one corpus word stand together
		ai, bi := strings.Index(a, " => "), strings.Index(b, " => ")
		if c := strings.Compare(a[ai:], b[bi:]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out
}

// write writes header and rules to path, after checking that the result parses.
func write(path, header string, rules []rule) error {
	var b bytes.Buffer
	ls := lines(rules)
	b.WriteString(strings.ReplaceAll(header, "{rules}", strconv.Itoa(len(ls))))
	for _, l := range ls {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	name := filepath.ToSlash(path)
	if _, err := synonyms.Parse(name, bytes.NewReader(b.Bytes())); err != nil {
		return fmt.Errorf("the generated file does not parse: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Printf("%s: %d rules\n", name, len(ls))
	return nil
}

// comment prefixes every line of text with "# ".
func comment(text string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString(strings.TrimRight("# "+l, " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// ---- WordNet ----

// wordNet is the synsets of WordNet 3.0 and the senses of each lemma.
type wordNet struct {
	synsets []wnSynset
	// senses is the number of senses of a lemma over all parts of speech.
	senses map[string]int
	// first is the offset of a lemma's most frequent sense in each part of speech, "n:02958343".
	first map[string]map[string]bool
	// main is the part of speech in which a lemma has the most senses (the first in noun, verb,
	// adjective, adverb order on a tie).
	main map[string]string
	// mainSenses is the number of senses of the lemma in main.
	mainSenses map[string]int
}

type wnSynset struct {
	key   string // "n:02958343"
	words []string
}

var wnPOS = []struct{ file, tag string }{{"noun", "n"}, {"verb", "v"}, {"adj", "a"}, {"adv", "r"}}

func readWordNet(dir string) (*wordNet, error) {
	wn := &wordNet{senses: map[string]int{}, first: map[string]map[string]bool{}, main: map[string]string{}, mainSenses: map[string]int{}}
	for _, pos := range wnPOS {
		if err := eachLine(filepath.Join(dir, "index."+pos.file), func(f []string) error {
			return wn.indexLine(pos.tag, f)
		}); err != nil {
			return nil, err
		}
		if err := eachLine(filepath.Join(dir, "data."+pos.file), func(f []string) error {
			s, err := parseDataLine(pos.tag, f)
			if err == nil {
				wn.synsets = append(wn.synsets, s)
			}
			return err
		}); err != nil {
			return nil, err
		}
	}
	return wn, nil
}

// eachLine calls fn with the fields of every line of a WordNet file that is not part of the
// licence header (those lines start with a space).
func eachLine(path string, fn func([]string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || line[0] == ' ' {
			continue
		}
		if err := fn(strings.Fields(line)); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	return sc.Err()
}

// indexLine reads "lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt
// synset_offset...", whose offsets are in order of sense frequency.
func (wn *wordNet) indexLine(tag string, f []string) error {
	if len(f) < 6 {
		return errors.New("short index line")
	}
	synsets, err1 := strconv.Atoi(f[2])
	ptrs, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || len(f) < 6+ptrs+synsets {
		return errors.New("bad index line")
	}
	lemma := strings.ReplaceAll(f[0], "_", " ")
	wn.senses[lemma] += synsets
	if synsets > wn.mainSenses[lemma] {
		wn.main[lemma], wn.mainSenses[lemma] = tag, synsets
	}
	if wn.first[lemma] == nil {
		wn.first[lemma] = map[string]bool{}
	}
	wn.first[lemma][tag+":"+f[6+ptrs]] = true
	return nil
}

// adjMarker is the syntactic marker of an adjective in a data line: "galore(ip)".
var adjMarker = regexp.MustCompile(`\((a|p|ip)\)$`)

// parseDataLine reads "synset_offset lex_filenum ss_type w_cnt word lex_id [word lex_id...]
// p_cnt ...": the words are the fifth field on, each followed by its lex_id; w_cnt is hex.
func parseDataLine(tag string, f []string) (wnSynset, error) {
	if len(f) < 6 {
		return wnSynset{}, errors.New("short data line")
	}
	n, err := strconv.ParseInt(f[3], 16, 32)
	if err != nil || len(f) < 4+2*int(n) {
		return wnSynset{}, errors.New("bad word count")
	}
	s := wnSynset{key: tag + ":" + f[0]}
	for i := range int(n) {
		w := adjMarker.ReplaceAllString(f[4+2*i], "")
		s.words = append(s.words, strings.ReplaceAll(w, "_", " "))
	}
	return s, nil
}

func (wn *wordNet) rules(v *vocabulary, opt options) []rule {
	var out []rule
	for _, s := range wn.synsets {
		if len(s.words) > opt.maxMembers {
			continue
		}
		var anchors, sources []string
		for _, w := range s.words {
			if hasUpper(w) {
				continue // a proper noun
			}
			lemma := strings.ToLower(w)
			if v.occurs(w) {
				if wn.anchors(lemma, s.key, opt) {
					anchors = append(anchors, w)
				}
				continue
			}
			if wn.senses[lemma] <= opt.maxSenses && v.usable(w, opt) {
				sources = append(sources, w)
			}
		}
		if r, ok := makeRule(v, anchors, sources); ok {
			out = append(out, r)
		}
	}
	return out
}

// anchors reports whether the synset key may be mapped onto lemma, a word of the procedures:
// it is in the lemma's main part of speech (the procedures use "dog" as a noun, not as the verb
// "chase"), and it is the lemma's most frequent sense there or the lemma has few senses.
func (wn *wordNet) anchors(lemma, key string, opt options) bool {
	if !strings.HasPrefix(key, wn.main[lemma]+":") {
		return false
	}
	return wn.first[lemma][key] || wn.senses[lemma] <= opt.maxSenses
}

func hasUpper(s string) bool { return strings.IndexFunc(s, unicode.IsUpper) >= 0 }

func wordnetHeader(opt options) string {
	return comment(fmt.Sprintf(`English general-language synonyms for the procedures, generated: do not edit by hand.
Source: WordNet 3.0 (Princeton University), the data.noun, data.verb, data.adj and data.adv
synsets and the index.* sense counts of the Debian package wordnet-base.
Licence: WordNet License (Princeton, BSD-like), quoted below.
Generated by: make synonyms (go run ./cmd/synonyms-build -max-senses %[1]d -min-len %[2]d -max-members %[3]d).
Rules: {rules}.

Filter: a synset is kept only when one of its members occurs in the English procedures
(folded and stemmed with the project's analyzer; a multi-word member as a sequence of
words; a word counts only when the procedures have a word with its stem at least as long,
so that "dogged" is not found by "dog"). Its rule maps the other members onto those corpus
members. A corpus member anchors a synset only when the synset is in the member's main part
of speech (the one with most senses) and is its most frequent sense there, or the member
has at most %[1]d senses. Synsets of more than %[3]d members are left out. A member is left
out when it has more than %[1]d senses over all parts of speech, is shorter than %[2]d
letters, is a proper noun or a stop word, or has characters a term may not have.

This software and database is being provided to you, the LICENSEE, by Princeton University
under the following license. By obtaining, using and/or copying this software and
database, you agree that you have read, understood, and will comply with these terms and
conditions.:

Permission to use, copy, modify and distribute this software and database and its
documentation for any purpose and without fee or royalty is hereby granted, provided that
you agree to comply with the following copyright notice and statements, including the
disclaimer, and that the same appear on ALL copies of the software, database and
documentation, including modifications that you make for internal use or for distribution.

WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.

THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY MAKES NO
REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED. BY WAY OF EXAMPLE, BUT NOT LIMITATION,
PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES OF MERCHANTABILITY OR FITNESS FOR
ANY PARTICULAR PURPOSE OR THAT THE USE OF THE LICENSED SOFTWARE, DATABASE OR DOCUMENTATION
WILL NOT INFRINGE ANY THIRD PARTY PATENTS, COPYRIGHTS, TRADEMARKS OR OTHER RIGHTS.

The name of Princeton University or Princeton may not be used in advertising or publicity
pertaining to distribution of the software and/or database. Title to copyright in this
software, database and any associated documentation shall at all times remain with
Princeton University and LICENSEE agrees to preserve same.
`, opt.maxSenses, opt.minLen, opt.maxMembers)) + "\n"
}

// ---- OpenThesaurus ----

// openThesaurus is the synsets of the OpenThesaurus text file, one a line, members separated
// by ";", each possibly labelled in parentheses: "Handy (Hauptform)", "abdüsen (ugs.)".
type openThesaurus struct {
	synsets [][]string
	// senses is the number of synsets a member, folded, belongs to.
	senses map[string]int
	// generated is the file's "Automatically generated ..." date, for the header.
	generated string
}

// otDropped are the labels of members that are not mapped: dated or figurative uses.
var otDropped = []string{"veraltet", "veraltend", "historisch", "fig.", "scherzhaft", "ironisch", "Jargon"}

var (
	otLabel  = regexp.MustCompile(`\([^)]*\)`)
	otDate   = regexp.MustCompile(`^# Automatically generated (\S+)`)
	otFolder = textproc.New("de")
)

func readOpenThesaurus(path string) (*openThesaurus, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseOpenThesaurus(f)
}

func parseOpenThesaurus(r io.Reader) (*openThesaurus, error) {
	ot := &openThesaurus{senses: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			if m := otDate.FindStringSubmatch(line); m != nil {
				ot.generated = m[1]
			}
			continue
		}
		var members []string
		seen := map[string]bool{}
		for _, m := range strings.Split(line, ";") {
			m, ok := cleanMember(m)
			if !ok {
				continue
			}
			k := otFolder.Fold(m)
			if !seen[k] {
				seen[k] = true
				ot.senses[k]++
				members = append(members, m)
			}
		}
		if len(members) > 1 {
			ot.synsets = append(ot.synsets, members)
		}
	}
	return ot, sc.Err()
}

// cleanMember removes a member's labels; it returns false for a member with a dropped label, a
// placeholder ("Deputat...") or characters a term may not have.
func cleanMember(m string) (string, bool) {
	for _, label := range otLabel.FindAllString(m, -1) {
		for _, d := range otDropped {
			if strings.Contains(label, d) {
				return "", false
			}
		}
	}
	m = strings.Join(strings.Fields(otLabel.ReplaceAllString(m, " ")), " ")
	if m == "" || synonyms.CheckTerm(m) != nil {
		return "", false
	}
	return m, true
}

func (ot *openThesaurus) rules(v *vocabulary, opt options) []rule {
	var out []rule
	for _, members := range ot.synsets {
		if len(members) > opt.maxMembers {
			continue
		}
		var anchors, sources []string
		for _, m := range members {
			senses := ot.senses[otFolder.Fold(m)]
			if v.occurs(m) {
				if senses <= opt.maxSenses {
					anchors = append(anchors, m)
				}
				continue
			}
			if senses <= opt.maxSenses && v.usable(m, opt) {
				sources = append(sources, m)
			}
		}
		if r, ok := makeRule(v, anchors, sources); ok {
			out = append(out, r)
		}
	}
	return out
}

func openThesaurusHeader(opt options, generated string) string {
	if generated == "" {
		generated = "unknown"
	}
	return comment(fmt.Sprintf(`Deutsche allgemeinsprachliche Synonyme für die Arbeitsanweisungen, generiert: nicht von Hand ändern.
Source: OpenThesaurus, German thesaurus in text format (generated %[3]s), the file
openthesaurus.txt of the Debian package openthesaurus-de-text.
Copyright (C) 2003-2014 Daniel Naber; data from OpenThesaurus users.
Licence: GNU Lesser General Public License (LGPL) version 2.1 or any later version. The
source file states: "This library is free software; you can redistribute it and/or modify
it under the terms of the GNU Lesser General Public License as published by the Free
Software Foundation; either version 2.1 of the License, or (at your option) any later
version. This library is distributed in the hope that it will be useful, but WITHOUT ANY
WARRANTY; without even the implied warranty of MERCHANTABILITY or FITNESS FOR A PARTICULAR
PURPOSE. See the GNU Lesser General Public License for more details." The Debian package's
copyright file gives "Copyright: (C) 2006 Daniel Naber, data from OpenThesaurus users;
License: LGPL". This file is a modified, filtered extract of that library.
Generated by: make synonyms (go run ./cmd/synonyms-build -max-senses %[1]d -min-len %[2]d -max-members %[4]d).
Rules: {rules}.

Filter: a synset is kept only when one of its members occurs in the German procedures
(folded and stemmed with the project's analyzer; a multi-word member as a sequence of
words; a word counts only when the procedures have a word with its stem at least as long,
and with its initial in the same case somewhere in their running text, so that the
adjective "panne" is not the noun "Panne"). Its rule maps the other members onto those
corpus members. Labels in parentheses are removed; members labelled dated, historical,
figurative, jocular, ironic or jargon are left out, and so are synsets of more than %[4]d
members. A member, the corpus member included, is left out when it belongs to more than
%[1]d synsets, and a member mapped onto the corpus when it is shorter than %[2]d letters,
is a stop word, or has characters a term may not have.
`, opt.maxSenses, opt.minLen, generated, opt.maxMembers)) + "\n"
}
