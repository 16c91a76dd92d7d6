package retrieval

import (
	"slices"
	"strings"
	"sync/atomic"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/judge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// The hit reasons of an evidence block (lookup.EvidenceBlock.HitReasons) say what found it and
// what of the question it holds. They are all made here: L1's ("l1:<score kind>"), its
// procedure's front-matter matches' ("l0:…", once per procedure), the question's words its own
// section holds ("section:<word>"), and the mark of a block that only the local search placed
// (a confirmed procedure's section, a complement's, an alternative's, the primary procedure's
// best section), of an outdated version's, of an answer's citation.
const (
	reasonTitle       = "l0:title"
	reasonPartial     = "l0:partial-phrase"
	reasonKeyword     = "l0:keyword:"
	reasonEntity      = "l0:entity:"
	reasonCategory    = "l0:category:"
	reasonSynonym     = "l0:synonym:"
	reasonConfirmed   = "l0:confirmed-procedure"
	reasonComplement  = "l0:complement"
	reasonAlternative = "l0:alternative"
	reasonBestSection = "l0:best-section"
	reasonOutdated    = "outdated"
	reasonAnswer      = "l1:answer"
	reasonSection     = "section:"
)

// l1Reason is the hit reason of a block L1 returned, by the provider's score kind.
// The known kinds' are constants, not made at every lookup.
func l1Reason(kind string) string {
	switch kind {
	case "bm25":
		return "l1:bm25"
	case "cosine_similarity":
		return "l1:cosine_similarity"
	}
	return "l1:" + kind
}

// textsOf returns the hit reasons kept for l's lookups. They are kept with l's index of every
// version (Lang.KeptShared: every day's view of it numbers the passages and phrases as it does,
// and their texts are the same), not in a map of the service's: a map keyed by the language
// would keep every epoch's index reachable that a caller's as_of ever made, while these are
// bounded by the passages and phrases on file whatever days are asked.
func textsOf(l *lexical.Lang) *langTexts {
	return l.KeptShared(textsKey, func(l *lexical.Lang) any { return newLangTexts(l) }).(*langTexts)
}

// textsKey keeps a language's hit-reason texts with it (lexical.Lang.KeptShared).
var textsKey = new(langTexts)

// matchReasons appends a front-matter match's hit reasons to list, each once, in the order
// keywords and entities, title, category, partial phrase. The reasons of phrases come from
// texts, made there the first time.
func matchReasons(m *lexical.FrontMatch, l *lexical.Lang, texts *langTexts, list []string) []string {
	for _, p := range m.Named {
		if p.Bridged {
			list = appendNew(list, texts.synonymReason(l, p.Phrase, p.Rule))
		} else {
			list = appendNew(list, texts.reason(l, p.Phrase))
		}
	}
	if m.Title {
		list = appendNew(list, reasonTitle)
	}
	if m.Category {
		list = appendNew(list, texts.reason(l, m.CategoryPhrase))
	}
	if m.Partial {
		list = appendNew(list, reasonPartial)
	}
	return list
}

// matchReasonCount is at most how many hit reasons the match has.
func matchReasonCount(m *lexical.FrontMatch) int {
	n := len(m.Named)
	if m.Title {
		n++
	}
	if m.Category {
		n++
	}
	if m.Partial {
		n++
	}
	return n
}

// reasonCount is at most how many hit reasons the block has.
func (f *fusing) reasonCount() int {
	n := 0
	if f.l1Rank > 0 {
		n++
	}
	if f.match != nil {
		n += matchReasonCount(f.match)
	}
	for _, m := range f.more {
		n += matchReasonCount(m)
	}
	return n
}

// hitReasons appends to out the block's hit reasons, each once: L1's, then those of its
// document's L0 match.
func (f *fusing) hitReasons(l *lexical.Lang, texts *langTexts, l1Reason string, out []string) []string {
	if f.l1Rank > 0 {
		out = appendNew(out, l1Reason)
	}
	if f.match != nil {
		out = matchReasons(f.match, l, texts, out)
	}
	for _, m := range f.more {
		out = matchReasons(m, l, texts, out)
	}
	return out
}

// maxSectionReasons bounds the section hit reasons of one block.
const maxSectionReasons = 8

// ownReasons makes each block's hit reasons its own: the question's words its section holds
// ("section:<word>", each as the question wrote it, folded, or by its index term when no word of
// the question stems to it, as for a synonym's), and its procedure's front-matter hits (the "l0:"
// reasons) only on the procedure's first block, where they are the procedure's, not repeated
// on every section of it.
func ownReasons(l *lexical.Lang, q *question, blocks []ranked) {
	// The reasons are gathered on the stack, then one array of their exact length holds every
	// block's, each block its own stretch of it: sized for the most each block could have, the
	// array was twice as large, and a trace keeps it.
	var abuf [64]string
	var ebuf [16]int
	all, ends := abuf[:0], ebuf[:0]
	var hbuf [maxSectionReasons]lexical.Term
	var mbuf [16]madeReason
	made := mbuf[:0]
	var texts *langTexts
	for i := range blocks {
		b := &blocks[i]
		first := !slices.ContainsFunc(blocks[:i], func(o ranked) bool { return o.DocumentID == b.DocumentID })
		for _, r := range b.HitReasons {
			if first || !frontMatterReason(r) {
				all = append(all, r)
			}
		}
		held := hbuf[:0]
		if _, sec := b.section(l); sec != nil {
			held = judge.AppendHeld(l, q.resolved, b.localPassage, held, maxSectionReasons)
		}
		for _, t := range held {
			// A word's reason is found once per lookup, however many blocks hold it.
			k := slices.IndexFunc(made, func(m madeReason) bool { return m.term == t })
			if k < 0 {
				if texts == nil {
					texts = textsOf(l)
				}
				made = append(made, madeReason{t, texts.sectionReason(t, q.writtenAs(l.String(t)))})
				k = len(made) - 1
			}
			all = append(all, made[k].reason)
		}
		ends = append(ends, len(all))
	}
	kept := make([]string, len(all))
	copy(kept, all)
	from := 0
	for i, end := range ends {
		blocks[i].HitReasons = kept[from:end:end]
		from = end
	}
}

// frontMatterReason reports whether r is one of the reasons matchReasons makes, which name what
// the block's procedure's front matter matched, not the block. The marks of blocks the local
// search placed share their "l0:" prefix but are the block's own, kept on every block.
func frontMatterReason(r string) bool {
	return r == reasonTitle || r == reasonPartial || strings.HasPrefix(r, reasonKeyword) || strings.HasPrefix(r, reasonEntity) ||
		strings.HasPrefix(r, reasonCategory) || strings.HasPrefix(r, reasonSynonym)
}

// madeReason is a section hit reason a lookup has found, by the index term it names.
type madeReason struct {
	term   lexical.Term
	reason string
}

// langTexts keeps the hit reasons of one language's front-matter phrases, each made the first
// time a lookup needs it, so that later lookups naming the same phrases build none of them
// again: per phrase the reason that names it whole ("l0:keyword:…", "l0:entity:…",
// "l0:category:…") and those that name the last few synonym rules that bridged it
// ("l0:synonym:…"). A lookup names a dozen or more phrases in its blocks' hit reasons, more in
// German, whose compounds bridge more synonyms: made afresh each time, they take a German lookup
// from 56 allocations to 101 and an English one from 52 to 59 (BenchmarkLookup). It is safe for
// concurrent use: a slot written twice holds the same text either time, and a synonym slot holds
// each rule beside the text made of it.
//
// It keeps, the same way, each passage's breadcrumb ("Title > Section") and its content as a
// trace's summary clips it: a lookup names five blocks, whose two texts cost ten allocations
// when made afresh (BenchmarkLookup/en 64 -> 54 allocations with the rest of that change).
type langTexts struct {
	reasons     []atomic.Pointer[string]          // by phrase
	synonyms    []atomic.Pointer[[]synonymReason] // by phrase: the last synonym rules' reasons
	breadcrumbs []atomic.Pointer[string]          // by passage
	previews    []atomic.Pointer[string]          // by passage
	// sections are the section hit reasons ("section:<word>") by index term: the last few
	// spellings of it a question wrote, each with its reason.
	sections []atomic.Pointer[[]writtenReason]
}

func newLangTexts(l *lexical.Lang) *langTexts {
	return &langTexts{
		reasons:     make([]atomic.Pointer[string], l.PhraseIndex().Len()),
		synonyms:    make([]atomic.Pointer[[]synonymReason], l.PhraseIndex().Len()),
		breadcrumbs: make([]atomic.Pointer[string], len(l.Passages)),
		previews:    make([]atomic.Pointer[string], len(l.Passages)),
		sections:    make([]atomic.Pointer[[]writtenReason], l.Postings().Terms()),
	}
}

// breadcrumb returns the breadcrumb of passage p's document and section (knowledge.Breadcrumb).
func (t *langTexts) breadcrumb(l *lexical.Lang, p int) string {
	return kept(&t.breadcrumbs[p], func() string {
		d, sec := l.Doc(p)
		return knowledge.Breadcrumb(d.Title, sec.Heading)
	})
}

// preview returns passage p's content clipped as a trace's summary carries it.
func (t *langTexts) preview(l *lexical.Lang, p int) string {
	return kept(&t.previews[p], func() string {
		_, sec := l.Doc(p)
		return textproc.Clip(sec.Content, lookup.SummaryChars)
	})
}

// kept returns the text in slot, made by mk and kept there if the slot is empty.
func kept(slot *atomic.Pointer[string], mk func() string) string {
	if s := slot.Load(); s != nil {
		return *s
	}
	s := mk()
	slot.Store(&s)
	return s
}

// reason returns the hit reason of the keyword, entity or category phrase p.
func (t *langTexts) reason(l *lexical.Lang, p uint32) string {
	return kept(&t.reasons[p], func() string {
		kind, text := l.PhraseString(p)
		switch kind {
		case lexical.PhraseKeyword:
			return reasonKeyword + text
		case lexical.PhraseEntity:
			return reasonEntity + text
		}
		return reasonCategory + text
	})
}

// synonymReason is the hit reason of a phrase that a synonym rule bridged.
type synonymReason struct{ rule, reason string }

// maxSynonymReasons is how many rules' reasons a phrase's slot keeps: a phrase is bridged by a
// few rules (a keyword and its colloquial words), and the slot stays bounded.
const maxSynonymReasons = 4

// synonymReason returns the hit reason "l0:synonym:<rule>=<phrase>" of the keyword or entity
// phrase p that rule bridged; the phrase's slot keeps the reasons of the last maxSynonymReasons
// rules (keptLast).
func (t *langTexts) synonymReason(l *lexical.Lang, p uint32, rule string) string {
	r := keptLast(&t.synonyms[p], maxSynonymReasons, func(r synonymReason) bool { return r.rule == rule },
		func() synonymReason {
			_, text := l.PhraseString(p)
			return synonymReason{rule: rule, reason: reasonSynonym + rule + "=" + text}
		})
	return r.reason
}

// keptLast returns the entry of slot's list that match finds, else the entry mk makes, kept
// first in a new list with the last ones after it, most in all: a list no one changes once
// stored, bounded whatever the lookups ask.
func keptLast[E any](slot *atomic.Pointer[[]E], most int, match func(E) bool, mk func() E) E {
	var kept []E
	if list := slot.Load(); list != nil {
		kept = *list
		for _, e := range kept {
			if match(e) {
				return e
			}
		}
	}
	e := mk()
	list := append([]E{e}, kept[:min(len(kept), most-1)]...)
	slot.Store(&list)
	return e
}

// writtenReason is the section hit reason of an index term as a question wrote it.
type writtenReason struct{ written, reason string }

// maxWrittenReasons is how many spellings of a term its slot keeps ("scratch", "scratches",
// "scratched"): a slot stays bounded whatever the questions write.
const maxWrittenReasons = 4

// sectionReason returns the hit reason "section:<written>" of the index term that a question
// wrote as written; the term's slot keeps the reasons of the last maxWrittenReasons spellings
// (keptLast): a lookup names a handful of its words in its blocks, and made afresh their reasons
// were a fifth of its allocations.
func (t *langTexts) sectionReason(term lexical.Term, written string) string {
	r := keptLast(&t.sections[term], maxWrittenReasons, func(r writtenReason) bool { return r.written == written },
		func() writtenReason {
			reason := reasonSection + written
			// The reason's own copy of the spelling: the slot never holds the question's text.
			return writtenReason{written: reason[len(reasonSection):], reason: reason}
		})
	return r.reason
}
