package retrieval

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/judge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
)

// CoveredShare is the share of the language's LexicalMinPoints from which the procedures cover a
// question that the evidence does not ground: its closest procedure holds at least
// minInformativeWords of its informative words and that much lexical evidence, and its front
// matter has an opinion on the question (frontMatter's min). Below it the
// question is one no procedure answers (off-topic, near-domain), and an insufficient answer then
// names no alternatives and offers no clarification: an agent must not ask the operator to
// choose between procedures none of which applies. Chosen on the development sets of eval/ (see
// docs/retrieval.md, "The clarifying turn").
const CoveredShare = 0.8

// covered reports whether the procedures cover the question judged weak in r: on the semantic
// path, when the semantic search scores the closest procedure at least at the supported
// threshold of its scale; on lexical evidence alone (the demo provider, or the semantic search
// down or empty), when the closest procedure holds enough of the question and its front matter
// names the question's subject (CoveredShare, HalfHeldShare). A
// question that names a topic the procedures do not cover, or with too few informative words,
// is never covered.
func (s *Service) covered(r judgement, views *pathViews) bool {
	sig := r.signals
	if sig.Uncovered.Term != "" || sig.Support.Words < minInformativeWords {
		return false
	}
	if sem := views.of(semanticSearch); sem.present {
		if sc, ok := s.scaleOf(s.provider.ScoreKind()); ok && sc.Supported > 0 {
			first, _ := sem.first()
			return first.score >= sc.Supported
		}
	}
	return LexicallyCovered(sig, r.lang, CoveredShare, HalfHeldShare)
}

// LexicallyCovered is covered's rule on lexical evidence at a share of the language's
// LexicalMinPoints (the service uses CoveredShare; make calibrate measures others), or half at
// most (the service uses HalfHeldShare) for a procedure that holds half the question: the closest
// procedure holds minInformativeWords of the question's words, that share of the points, and its
// front matter has an opinion (frontMatter's min), or halfHeld; never for an uncovered topic.
func LexicallyCovered(sig Signals, lang string, share, half float64) bool {
	return sig.Uncovered.Term == "" && sig.Support.Words >= minInformativeWords && sig.Procedure.Matched >= minInformativeWords &&
		(sig.Points >= share*LexicalMinPoints(lang) && sig.FrontWeight >= frontMatter.min || halfHeld(sig, lang, half))
}

// HalfHeldShare is the share of the language's LexicalMinPoints from which a procedure that holds
// at least half of the question's informative words, its front matter naming the question's
// subject clearly (WholeQuestionFrontWeight), covers a question the evidence does not ground, and
// grounds it once the operator confirms it: a chatty or terse question ("phone dead, car locked")
// says little in the procedures' words, but what it says, one procedure holds. Below CoveredShare
// and ConfirmedShare, which hold for any share of the question held. Chosen on the development
// sets of eval/ (docs/retrieval.md, "The clarifying turn").
const HalfHeldShare = 0.55

// halfHeld reports whether the procedure holds at least half of the question's informative words
// (and minInformativeWords), at least share of the points, and its front matter names the
// question's subject clearly; never at a share of 0.
func halfHeld(sig Signals, lang string, share float64) bool {
	return share > 0 && sig.Procedure.Matched >= minInformativeWords && 2*sig.Procedure.Matched >= sig.Procedure.Words &&
		sig.Points >= share*LexicalMinPoints(lang) && sig.FrontWeight >= WholeQuestionFrontWeight
}

// lexicallyClarifiable reports whether lexical evidence of proc's words and points could meet
// LexicallyCovered or LexicallyConfirmed at the service's shares, the front matter's opinion and
// the topic left aside: the least evidence for which an uncovered topic changes the answer.
func lexicallyClarifiable(proc judge.Support, points float64, lang string) bool {
	share := min(CoveredShare, ConfirmedShare)
	if 2*proc.Matched >= proc.Words {
		share = min(share, HalfHeldShare)
	}
	return proc.Matched >= minInformativeWords && points >= share*LexicalMinPoints(lang)
}

// maxSituationPhrases is how many of the question's front-matter phrases an option's situation
// names beside the procedure's title.
const maxSituationPhrases = 2

// clarification is the question an agent relays when the evidence is weak but covered: which of
// the primary block's procedure and its alternatives applies, each named by its title and the
// keywords of its front matter the question matched. Nil when there is no procedure to offer.
func clarification(l *lexical.Lang, primary string, alts []lookup.Alternative, matches []lexical.FrontMatch) *lookup.Clarification {
	ids := make([]string, 0, 8) // a constant capacity keeps the few ids on the stack
	ids = append(ids, primary)
	for _, a := range alts {
		ids = appendUnique(ids, a.DocumentID)
	}
	c := &lookup.Clarification{Options: make([]lookup.Option, 0, len(ids))}
	for _, id := range ids {
		di := l.DocIndex(id)
		if di < 0 {
			continue
		}
		title := l.Docs[di].Title
		c.Options = append(c.Options, lookup.Option{Procedure: id, Title: title, Situation: situation(l, di, title, matches)})
	}
	if len(c.Options) == 0 {
		return nil
	}
	c.Question = clarifyingQuestion(l.Language, c.Options)
	return c
}

// situation names a procedure as an operator knows it: its title, with the keywords of its front
// matter the question matched ("Digital key and access failures: won't unlock, locked out").
func situation(l *lexical.Lang, doc int, title string, matches []lexical.FrontMatch) string {
	var named []string
	for _, m := range matches {
		if m.Doc != doc {
			continue
		}
		for _, p := range m.Named {
			if kind, text := l.PhraseString(p.Phrase); kind == lexical.PhraseKeyword && len(named) < maxSituationPhrases {
				named = appendUnique(named, text)
			}
		}
	}
	if len(named) == 0 {
		return title
	}
	return title + ": " + strings.Join(named, ", ")
}

// clarifyingQuestion asks which option applies, in the request's language: "Is this about A?",
// "Is this about A or B?", "Is this about A, B or C?" (German: "Geht es um …?").
func clarifyingQuestion(lang string, opts []lookup.Option) string {
	lead, or := "Is this about ", " or "
	if lang == "de" {
		lead, or = "Geht es um ", " oder "
	}
	names := make([]string, len(opts))
	for i, o := range opts {
		names[i] = o.Title
		if lang != "de" {
			names[i] = lowerFirst(o.Title)
		}
	}
	var b strings.Builder
	b.Grow(len(lead) + 1 + len(names)*(len(or)+64)) // one allocation for titles of up to 64 bytes
	b.WriteString(lead)
	for i, n := range names {
		switch {
		case i == 0:
		case i == len(names)-1:
			b.WriteString(or)
		default:
			b.WriteString(", ")
		}
		b.WriteString(n)
	}
	b.WriteString("?")
	return b.String()
}

// lowerFirst lowers a title's first letter to run on in an English sentence, unless the first
// word is an abbreviation ("EV charging").
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || len(s) > n && unicode.IsUpper(rune(s[n])) {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}

// optionIDs are the procedures a clarification offers, as the trace records them; nil for none.
func optionIDs(c *lookup.Clarification) []string {
	if c == nil {
		return nil
	}
	ids := make([]string, len(c.Options))
	for i, o := range c.Options {
		ids[i] = o.Procedure
	}
	return ids
}

// leadingBlocks is how many of the first blocks an alternative's block never displaces: the
// primary's best sections, where the answer's deciding detail is read first.
const leadingBlocks = 3

// showAlternatives makes room within topK for the best block of each alternative that no block is
// of: an agent asked to relay a choice between situations reads each of them. Such a block takes
// the place of the lowest-ranked block after the leading ones and after the complements' (which
// follow the primary), or is added when the blocks are fewer than topK; with no room left, the
// alternative is still named, its block not shown.
// It returns the blocks and their evidence unchanged when every alternative has one.
func showAlternatives(l *lexical.Lang, r judgement, blocks []ranked, evidence []lookup.EvidenceBlock, topK, extra int) ([]ranked, []lookup.EvidenceBlock) {
	lead := min(max(leadingBlocks, 1+len(r.Complements)), len(blocks))
	var add []ranked
	for _, a := range r.Alternatives {
		shown := func(b ranked) bool { return b.DocumentID == a.DocumentID }
		if slices.ContainsFunc(blocks, shown) || slices.ContainsFunc(add, shown) {
			continue
		}
		p, ok := alternativePassage(l, a)
		if !ok || min(len(blocks), topK-len(add)-1) < lead {
			continue // no section named, or no room but a leading block's
		}
		b := localBlock(l, lexical.Hit{Passage: p}, reasonAlternative)
		if r.views != nil {
			// The score of the path whose ranking named the alternative's section (alternative).
			if src, sc, ok := r.views.sectionOf(l, a.DocumentID); ok && src == a.Source && sc.Kind != "" {
				b.Score = sc
			}
		}
		add = append(add, b)
	}
	if len(add) == 0 {
		return blocks, evidence
	}
	order := append(slices.Clone(blocks[:min(len(blocks), topK-len(add))]), add...)
	return renumber(order, topK, extra)
}

// alternativePassage is the index passage of an alternative's best block (its source's section).
func alternativePassage(l *lexical.Lang, a lookup.Alternative) (int, bool) {
	i := strings.LastIndexByte(a.Source, '#')
	if i < 0 {
		return 0, false
	}
	return l.PassageOf(a.DocumentID, a.Source[i+1:])
}
