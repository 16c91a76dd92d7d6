package retrieval

import (
	"sync/atomic"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// langTexts keeps strings that lookups return and that depend on one language's index alone,
// each made the first time a lookup needs it, so that later lookups returning the same
// procedures build none of them again: per front-matter phrase the hit reason that names it
// whole ("l0:keyword:…", "l0:entity:…", "l0:category:…"), per passage its breadcrumb and its
// content as a trace summary holds it. It is safe for concurrent use: a slot written twice holds
// the same text either time.
type langTexts struct {
	reasons     []atomic.Pointer[string] // by phrase
	breadcrumbs []atomic.Pointer[string] // by passage
	previews    []atomic.Pointer[string] // by passage
}

func newLangTexts(l *lexical.Lang) *langTexts {
	return &langTexts{
		reasons:     make([]atomic.Pointer[string], l.Phrases()),
		breadcrumbs: make([]atomic.Pointer[string], len(l.Passages)),
		previews:    make([]atomic.Pointer[string], len(l.Passages)),
	}
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
		doc, kind, i, _ := l.Phrase(p)
		d := l.Docs[doc]
		switch kind {
		case lexical.PhraseKeyword:
			return "l0:keyword:" + d.Keywords[i]
		case lexical.PhraseEntity:
			return "l0:entity:" + d.Entities[i]
		}
		return "l0:category:" + d.Category
	})
}

// breadcrumb returns knowledge.Breadcrumb of the passage's document title and section heading.
func (t *langTexts) breadcrumb(l *lexical.Lang, passage int) string {
	return kept(&t.breadcrumbs[passage], func() string {
		d, sec := l.Doc(passage)
		return knowledge.Breadcrumb(d.Title, sec.Heading)
	})
}

// preview returns the passage's content clipped to SummaryChars.
func (t *langTexts) preview(l *lexical.Lang, passage int) string {
	return kept(&t.previews[passage], func() string {
		_, sec := l.Doc(passage)
		return textproc.Clip(sec.Content, SummaryChars)
	})
}
