package judge

import (
	"slices"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/synonyms"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// Uncovered is a topic the procedures do not cover that a question names (see
// knowledge.Corpus.Uncovered).
type Uncovered struct {
	// Topic is the topic's name, e.g. "pricing"; Term the question's term as the rule writes it,
	// e.g. "per minute"; Source the rule's "<file>:<line>".
	Topic, Term, Source string
}

// uncoveredRules are a language's uncovered-topic rules, compiled.
type uncoveredRules struct {
	// m finds the rules' terms; an expansion's source line is the number of its rule in rules.
	m     *synonyms.Matcher
	rules []synonyms.Rule
	// words are the one-word terms of at least minAffix bytes, folded, for a language that
	// splits compounds: such a term also names its topic as the head or tail of a compound
	// ("Reisekostenabrechnung" holds "Reisekosten").
	words []uncoveredWord
	// byStem holds every term's stems, its stop words excepted, keyed by the longest of them: a
	// question that holds all the stems of no term (and, for words, has no word starting or
	// ending with one) names no topic, which is told without analysing it again.
	byStem map[string][][]string
	// stopOnly is set when some term is made of stop words only, which stems cannot rule out.
	stopOnly bool
	// byFirst and byLast hold the words' stems (of words) by a hash of their first two and of
	// their last two bytes (affixBucket), so that mayName tries only the one or two that can
	// start or end a question's word; short holds the stems of fewer than two bytes, which any
	// word may start or end with.
	byFirst, byLast *[affixBuckets][]string
	short           []string
}

// affixBuckets is the number of buckets of uncoveredRules.byFirst and byLast: a language has a
// few hundred one-word terms, so that most buckets hold none or one.
const affixBuckets = 1024

// affixBucket is the bucket of two bytes, the first two or the last two of a stem or word.
func affixBucket(a, b byte) int { return (int(a)*131 + int(b)) % affixBuckets }

type uncoveredWord struct {
	folded, stem string
	u            Uncovered
}

// minAffix is the shortest one-word term found at the start or end of a compound; a shorter one
// ("Abo", "Lohn") would be found in unrelated words ("lohnt").
const minAffix = 5

// rulesKey keeps a language's compiled rules with it and its epochs (lexical.Lang.KeptShared).
var rulesKey = new(uncoveredRules)

// rulesOf returns the language's uncovered-topic rules, compiled on first use and kept with the
// language and every epoch of it: they are read only when a lookup judges lexical evidence, never
// at a cold start.
func rulesOf(l *lexical.Lang) *uncoveredRules {
	return l.KeptShared(rulesKey, func(l *lexical.Lang) any { return compileUncovered(l.UncoveredRules(), l.Text) }).(*uncoveredRules)
}

// compileUncovered compiles the uncovered-topic rules s for the analysis a.
func compileUncovered(s *synonyms.Set, a *textproc.Analyzer) *uncoveredRules {
	r := &uncoveredRules{m: termMatcher(s, a), rules: s.Rules(), byStem: map[string][][]string{}}
	for _, rule := range s.Rules() {
		for _, term := range rule.Terms {
			toks := a.Tokens(term)
			var stems []string
			key := ""
			for _, t := range toks {
				if !a.IsStop(t) {
					st := a.Stem(t)
					stems = append(stems, st)
					if len(st) > len(key) {
						key = st
					}
				}
			}
			if len(stems) == 0 {
				r.stopOnly = true
			} else {
				r.byStem[key] = append(r.byStem[key], stems)
			}
			if a.Splitter() != nil && len(toks) == 1 && len(toks[0]) >= minAffix {
				r.words = append(r.words, uncoveredWord{toks[0], a.Stem(toks[0]), Uncovered{Topic: rule.Targets[0], Term: term, Source: rule.Source}})
			}
		}
	}
	if len(r.words) > 0 {
		r.byFirst, r.byLast = new([affixBuckets][]string), new([affixBuckets][]string)
	}
	for _, w := range r.words {
		st := w.stem
		if len(st) < 2 {
			r.short = append(r.short, st)
			continue
		}
		first, last := affixBucket(st[0], st[1]), affixBucket(st[len(st)-2], st[len(st)-1])
		r.byFirst[first] = append(r.byFirst[first], st)
		r.byLast[last] = append(r.byLast[last], st)
	}
	return r
}

// termMatcher compiles the terms of the rules as synonym terms are compiled (a term of two or
// more words by its words' stems, one word as it stands), each rule mapped onto one placeholder
// instead of its topic: a synonym term that stems like its own target is dropped as the target
// itself, and "parking permit" stems like the topic "parking-permits". The placeholder rule on
// line i is rule i, which an expansion's source names.
func termMatcher(s *synonyms.Set, a *textproc.Analyzer) *synonyms.Matcher {
	var b strings.Builder
	for _, r := range s.Rules() {
		b.WriteString(strings.Join(r.Terms, ", "))
		b.WriteString(" => " + topicPlaceholder + "\n")
	}
	placeholders, err := synonyms.Parse("uncovered", strings.NewReader(b.String()))
	if err != nil {
		// The terms parsed once already, with their topics; the same terms cannot fail now.
		panic("uncovered topics: " + err.Error())
	}
	return placeholders.CompileStemmed(a.Tokens, a.Stem)
}

// topicPlaceholder is the target termMatcher maps every term onto: no term of a language stems
// like it.
const topicPlaceholder = "zzuncoveredtopic"

// UncoveredTopic returns the first topic of the uncovered-topic rules that the question names
// and that the document doc (an index into Docs) does not use: the term's words, in order (by
// their stems), are in none of its sections, its title, keywords or entities. A procedure that
// uses the term may well answer the question; one that does not answers a question next to it.
// In a language that splits compounds, a one-word term of at least five letters also counts at
// the start or end of a longer word of the question, and the procedure then uses it when it has
// the term or that word.
//
// toks are the question's tokens and stems their stems, and words its words as the analyzer made
// them (their Term the stem of each word), which rule out at no cost a question that names no
// topic: a question's analysis (textproc.QuestionAnalysis) holds all three.
func UncoveredTopic(l *lexical.Lang, toks, stems []string, words []textproc.Group, doc int) (Uncovered, bool) {
	if l.UncoveredRules() == nil {
		return Uncovered{}, false
	}
	r := rulesOf(l)
	if r.m.Terms() == 0 || !r.stopOnly && !r.mayName(words) {
		return Uncovered{}, false
	}
	var used [][]string // the document's texts as stems, made when a term first needs them
	uses := func(seqs ...[]string) bool {
		if !slices.ContainsFunc(seqs, func(seq []string) bool { return mayHold(l, doc, seq) }) {
			return false // the index says no text of the document has every word
		}
		if used == nil {
			used = docStems(l, doc)
		}
		return slices.ContainsFunc(used, func(text []string) bool {
			return slices.ContainsFunc(seqs, func(seq []string) bool { return holds(text, seq) })
		})
	}
	for _, e := range r.m.Expand(toks, stems, nil) {
		if !uses(stems[e.Start:e.End]) {
			rule := r.rules[e.Line-1]
			return Uncovered{Topic: rule.Targets[0], Term: e.Rule, Source: rule.Source}, true
		}
	}
	for i, tok := range toks {
		for _, w := range r.words {
			if len(tok) > len(w.folded) && (strings.HasPrefix(tok, w.folded) || strings.HasSuffix(tok, w.folded)) &&
				!uses([]string{w.stem}, stems[i:i+1]) {
				return w.u, true
			}
		}
	}
	return Uncovered{}, false
}

// mayName reports whether the question's words hold every stem of some term, or one starts or
// ends with a one-word term's stem.
func (r *uncoveredRules) mayName(words []textproc.Group) bool {
	has := func(stem string) bool {
		return slices.ContainsFunc(words, func(g textproc.Group) bool { return g.Term == stem })
	}
	for _, g := range words {
		for _, stems := range r.byStem[g.Term] {
			if !slices.ContainsFunc(stems, func(st string) bool { return !has(st) }) {
				return true
			}
		}
		if r.affixOf(g.Term) {
			return true
		}
	}
	return false
}

// affixOf reports whether term starts or ends with the stem of one of the one-word terms.
func (r *uncoveredRules) affixOf(term string) bool {
	for _, st := range r.short {
		if strings.HasPrefix(term, st) || strings.HasSuffix(term, st) {
			return true
		}
	}
	if len(term) < 2 || r.byFirst == nil {
		return false // only a short stem can start or end it, or there are only short ones
	}
	for _, st := range r.byFirst[affixBucket(term[0], term[1])] {
		if strings.HasPrefix(term, st) {
			return true
		}
	}
	for _, st := range r.byLast[affixBucket(term[len(term)-2], term[len(term)-1])] {
		if strings.HasSuffix(term, st) {
			return true
		}
	}
	return false
}

// mayHold reports whether the document's texts may hold the stems seq, false when the index
// says one of them is in none: every text docStems reads is indexed (title, keywords, headings
// and contents in the passages, entities in the front matter), stop words excepted. It spares
// docStems, which analyses the whole document, for the terms a procedure does not use.
func mayHold(l *lexical.Lang, doc int, seq []string) bool {
	post, front := l.Postings(), l.FrontMatter()
	for _, s := range seq {
		if l.Text.StopStem(s) {
			continue
		}
		if t, ok := l.Lookup(s); !ok || !post.DocHas(doc, t) && !front.Has(doc, t) {
			return false
		}
	}
	return true
}

// docStems returns the stems of every text of a document: its sections, title, keywords and
// entities, each text apart so that no term is found across two of them.
func docStems(l *lexical.Lang, doc int) [][]string {
	d := l.Docs[doc]
	texts := []string{d.Title}
	texts = append(texts, d.Keywords...)
	texts = append(texts, d.Entities...)
	for _, s := range d.Sections {
		texts = append(texts, s.Heading, s.Content)
	}
	out := make([][]string, len(texts))
	for i, t := range texts {
		toks := l.Text.Tokens(t)
		for j, tok := range toks {
			toks[j] = l.Text.Stem(tok)
		}
		out[i] = toks
	}
	return out
}

// holds reports whether text holds the sequence seq.
func holds(text, seq []string) bool {
	for i := 0; i+len(seq) <= len(text); i++ {
		if slices.Equal(text[i:i+len(seq)], seq) {
			return true
		}
	}
	return false
}
