package retrieval

import (
	"sync/atomic"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

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
// when made afresh (BenchmarkLookup/en 64 -> 54 allocations with the rest of this change).
type langTexts struct {
	reasons     []atomic.Pointer[string]          // by phrase
	synonyms    []atomic.Pointer[[]synonymReason] // by phrase: the last synonym rules' reasons
	breadcrumbs []atomic.Pointer[string]          // by passage
	previews    []atomic.Pointer[string]          // by passage
}

func newLangTexts(l *lexical.Lang) *langTexts {
	return &langTexts{
		reasons:     make([]atomic.Pointer[string], l.PhraseIndex().Len()),
		synonyms:    make([]atomic.Pointer[[]synonymReason], l.PhraseIndex().Len()),
		breadcrumbs: make([]atomic.Pointer[string], len(l.Passages)),
		previews:    make([]atomic.Pointer[string], len(l.Passages)),
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
			return "l0:keyword:" + text
		case lexical.PhraseEntity:
			return "l0:entity:" + text
		}
		return "l0:category:" + text
	})
}

// synonymReason is the hit reason of a phrase that a synonym rule bridged.
type synonymReason struct{ rule, reason string }

// maxSynonymReasons is how many rules' reasons a phrase's slot keeps: a phrase is bridged by a
// few rules (a keyword and its colloquial words), and the slot stays bounded.
const maxSynonymReasons = 4

// synonymReason returns the hit reason "l0:synonym:<rule>=<phrase>" of the keyword or entity
// phrase p that rule bridged. The slot keeps the reasons of the last maxSynonymReasons rules,
// the latest first, in a list no one changes once stored.
func (t *langTexts) synonymReason(l *lexical.Lang, p uint32, rule string) string {
	var kept []synonymReason
	if list := t.synonyms[p].Load(); list != nil {
		kept = *list
		for _, r := range kept {
			if r.rule == rule {
				return r.reason
			}
		}
	}
	_, text := l.PhraseString(p)
	reason := "l0:synonym:" + rule + "=" + text
	list := append([]synonymReason{{rule: rule, reason: reason}}, kept[:min(len(kept), maxSynonymReasons-1)]...)
	t.synonyms[p].Store(&list)
	return reason
}
