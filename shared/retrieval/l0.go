package retrieval

import (
	"cmp"
	"slices"
	"sync"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// l0Match is one document matched by its front matter.
type l0Match struct {
	doc    int
	weight float64 // sum of the IDF of the query terms the front matter covers, generic ones aside
	// evidence is weight with the generic terms (see l0) counted too: the lexical evidence rule
	// weighs all the question's words the front matter holds; only the ranking leaves those out.
	evidence float64
	// The parts of the match's hit reasons (see reasons): they are made into strings only for
	// the blocks fusion returns, as most matches never become one.
	named          []phraseReason // the keywords and entities the question holds whole, in phrase order
	title          bool           // the title matched
	category       bool           // the category matched, as the phrase categoryPhrase
	categoryPhrase uint32
	partial        bool // a question term matched only part of a phrase
	passage        int  // the document's section that best matches the question (see l0's sections)
	// phrases counts the front-matter phrases (keywords, entities, title, category) the question
	// holds whole that name this document's domain alone (a term no other category's front
	// matter has); covered lists the distinct such terms.
	phrases int
	covered []lexical.Term
}

// phraseReason is a keyword or entity phrase the question holds whole and, when a synonym
// bridged to it, the synonym's rule.
type phraseReason struct {
	phrase  uint32
	bridged bool
	rule    string
}

// reasons appends the match's hit reasons to list, each once, in the order keywords and
// entities, title, category, partial phrase. The reasons of phrases no synonym bridged come from
// texts, made there the first time.
func (m *l0Match) reasons(l *lexical.Lang, texts *langTexts, list []string) []string {
	for _, p := range m.named {
		if p.bridged {
			list = appendNew(list, texts.synonymReason(l, p.phrase, p.rule))
		} else {
			list = appendNew(list, texts.reason(l, p.phrase))
		}
	}
	if m.title {
		list = appendNew(list, "l0:title")
	}
	if m.category {
		list = appendNew(list, texts.reason(l, m.categoryPhrase))
	}
	if m.partial {
		list = appendNew(list, "l0:partial-phrase")
	}
	return list
}

// reasonCount is at most how many hit reasons the match has.
func (m *l0Match) reasonCount() int {
	n := len(m.named)
	if m.title {
		n++
	}
	if m.category {
		n++
	}
	if m.partial {
		n++
	}
	return n
}

// l0Scratch is l0's memory, kept for the next call: its working lists and maps, and the arrays
// behind the matches it returns (matches, named, covered), which the caller keeps until it has
// done with the matches, then releases.
type l0Scratch struct {
	query []lexical.Term
	// qw holds, for each term of query, what its weight adds to a document's L0 weight (see
	// queryWeight), made once for the documents' loops.
	qw     []queryWeight
	weight map[lexical.Term]float64
	// weighed holds every term of weight: most terms l0 asks about
	// are no question term, and a clear bit says so without asking the map.
	weighed       termFilter
	via           map[lexical.Term]string
	alts          map[lexical.Term]bool
	span          map[lexical.Term]int
	phrased       []int
	held          []uint64
	whole         []uint32
	full, inTitle []lexical.Term
	matches       []l0Match
	named         []phraseReason
	covered       []lexical.Term
	// seenKeywords and seenEntities hold the text ids (Lang.PhraseTextID) of the phrases
	// already named in a lookup's hints.
	seenKeywords, seenEntities []uint32
	// cands is the array lent to the provider for a lookup's candidates (port.Query.Buffer).
	cands []port.Candidate
	// terms and termWeights hold the question's index terms and their weights (queryTerms),
	// which the lookup lends to l0 and the provider.
	terms       []string
	termWeights map[string]float64
	// question holds the informative words resolved for the blocks' lexical support.
	question lexical.Question
}

var l0Scratches = sync.Pool{New: func() any { return newL0Scratch() }}

func newL0Scratch() *l0Scratch {
	return &l0Scratch{weight: map[lexical.Term]float64{}, via: map[lexical.Term]string{},
		alts: map[lexical.Term]bool{}, span: map[lexical.Term]int{}, termWeights: map[string]float64{}}
}

// getL0Scratch returns a scratch for one l0 call; release it when done with the matches.
func getL0Scratch() *l0Scratch { return l0Scratches.Get().(*l0Scratch) }

// release empties the scratch and returns it to the pool. Maps that a long question made large
// are dropped rather than kept, since clearing one costs its size on every later call.
func (sc *l0Scratch) release() {
	const keep = 64
	if cap(sc.cands) > keep {
		sc.cands = nil
	} else {
		clear(sc.cands[:cap(sc.cands)]) // the pool keeps no strings of the candidates
	}
	if sc.question.Size() > 4*keep {
		sc.question = lexical.Question{}
	}
	if cap(sc.terms) > keep || len(sc.termWeights) > keep {
		sc.terms, sc.termWeights = nil, map[string]float64{}
	} else {
		clear(sc.terms[:cap(sc.terms)]) // nor of the question
		clear(sc.termWeights)
	}
	if len(sc.weight) > keep || len(sc.via) > keep || len(sc.alts) > keep || len(sc.span) > keep {
		sc.weight, sc.via = map[lexical.Term]float64{}, map[lexical.Term]string{}
		sc.alts, sc.span = map[lexical.Term]bool{}, map[lexical.Term]int{}
		sc.weighed = termFilter{}
	} else {
		clear(sc.weight)
		sc.weighed = termFilter{}
		clear(sc.via)
		clear(sc.alts)
		clear(sc.span)
	}
	l0Scratches.Put(sc)
}

// keepCandidates keeps the array of a provider's candidates for the lookup's next call, and the
// next lookup, when it is larger than the one the scratch had.
func (sc *l0Scratch) keepCandidates(cands []port.Candidate) {
	if cap(cands) > cap(sc.cands) {
		sc.cands = cands[:0]
	}
}

// queryWeight is what one question term adds to a document's L0 weight: full when the document's
// front matter matches it whole, partial when only as part of a phrase; generic for a term most
// procedures' front matter names (see l0), which adds to a document's evidence alone.
type queryWeight struct {
	full, partial float64
	generic       bool
}

// termFilter is a 256-bit filter of terms: a term it does not hold is in no set it filters, so
// the set's map need not be asked.
type termFilter [4]uint64

// termBit is the bit of a termFilter that t sets (a multiplicative hash's top 8 bits).
func termBit(t lexical.Term) uint32 { return (uint32(t) * 2654435761) >> 24 }

func (f *termFilter) add(t lexical.Term) {
	b := termBit(t)
	f[b>>6] |= 1 << (b & 63)
}

func (f *termFilter) has(t lexical.Term) bool {
	b := termBit(t)
	return f[b>>6]&(1<<(b&63)) != 0
}

// minGenericDocs is the fewest procedures (of a language) in which a front-matter term can be
// generic, named by most of them (see l0).
const minGenericDocs = 3

// partialWeight is the share of its IDF a question term adds to a document's L0 weight when it
// matches only part of a keyword or entity phrase.
const partialWeight = 0.5

// l0 matches the question's terms against the front matter (title, keywords, entities,
// category) of the documents whose front matter holds any of them, found through the index's
// inverted front-matter index, so that its cost follows what matches. A keyword or entity
// matches when all of its terms are in the question, a title when the question holds at least
// half of its IDF weight. A document's weight is the IDF weight of the question terms its
// matches cover, each term counted once, plus partialWeight of the terms that occur only in
// phrases it did not fully match. The best section is chosen for the first sections matches
// only: those are the ones fusion may use.
// Domains are the categories with strong L0 evidence among the leading matches (see
// strongDomains): only those become hints, and only a single one filters L1.
// strs and weights are the question's terms and their weights (see queryTerms); l0 only reads them.
// The matches live in sc: they are valid until sc is released.
func l0(l *lexical.Lang, words []textproc.Group, strs []string, weights map[string]float64, sections int, sc *l0Scratch) (lookup.L0Hints, []l0Match) {
	// The question's terms the index holds, in question order, with their weights (a term only
	// a synonym gives weighs less).
	query, weight, via := slices.Grow(sc.query[:0], len(strs)), sc.weight, sc.via
	qw := slices.Grow(sc.qw[:0], len(strs))
	for _, s := range strs {
		if t, ok := l.Lookup(s); ok {
			query = append(query, t)
			x := cmp.Or(weights[s], 1)
			weight[t] = x
			sc.weighed.add(t)
			// A term most procedures' front matter names ("customer", "vehicle", "Kunde",
			// "Fahrzeug") is generic: it tells no procedure from another, so it adds nothing to a
			// document's L0 weight, and a document it alone matches is no L0 match. In a corpus
			// of fewer than minGenericDocs procedures no term is: there every term of one
			// procedure's front matter is in "most" of them.
			qw = append(qw, queryWeight{full: x * l.IDFOf(t), partial: x * partialWeight * l.IDFOf(t),
				generic: len(l.Docs) >= minGenericDocs && 2*len(l.FrontDocs(t)) > len(l.Docs)})
		}
	}
	sc.query, sc.qw = query, qw
	// weightOf returns a question term's weight; false for a term the question does not hold.
	weightOf := func(t lexical.Term) (float64, bool) {
		if !sc.weighed.has(t) {
			return 0, false
		}
		w, ok := weight[t]
		return w, ok
	}
	// via names the question's term behind each term that only a synonym gives; alts holds
	// every synonym's term.
	alts, span := sc.alts, sc.span
	// viaTerms holds every term of via, which is asked about every word of every phrase the
	// question holds whole.
	var viaTerms termFilter
	for _, g := range words {
		for _, a := range g.Alts {
			if t, ok := l.Lookup(a.Term); ok {
				alts[t] = true
			}
			if _, ok := weights[a.Term]; !ok {
				continue
			}
			if t, ok := l.Lookup(a.Term); ok {
				if _, seen := via[t]; !seen {
					via[t] = a.Rule
					viaTerms.add(t)
				}
			}
		}
	}
	// span is, for a question term that is part of a synonym term of several words, how many
	// words that term has (see subsumed).
	for _, g := range words {
		if g.Span > 1 {
			if t, ok := l.Lookup(g.Term); ok {
				span[t] = max(span[t], g.Span)
			}
		}
	}
	// viaHas is via[t], the map asked only when viaTerms holds t.
	viaHas := func(t lexical.Term) (string, bool) {
		if !viaTerms.has(t) {
			return "", false
		}
		r, ok := via[t]
		return r, ok
	}
	// subsumed reports whether a phrase's words (two or more) are all, in the question, part of a longer
	// synonym term that reads them otherwise (none of them is among the synonyms' words): in
	// "phone battery is dead" the operator's phone died, and the keyword "dead battery" matches
	// only partly; in "nobody can unlock" (=> "unlock", "outage") the keyword "unlock" stays.
	subsumed := func(terms []lexical.Term) bool {
		if len(terms) < 2 || len(span) == 0 {
			// One word inside a longer term is mostly what it is about; and with no term of
			// several words in the question, no phrase is inside one.
			return false
		}
		for _, t := range terms {
			if _, syn := viaHas(t); syn || span[t] <= len(terms) || alts[t] {
				return false
			}
		}
		return true
	}
	// synonym returns the rule behind the first of terms that only a synonym gives.
	synonym := func(terms []lexical.Term) (string, bool) {
		for _, t := range terms {
			if r, ok := viaHas(t); ok {
				return r, true
			}
		}
		return "", false
	}
	// Phrase hits, through the inverted phrase index: a keyword, entity or category phrase
	// matches when the question holds all of its words; a title may match when the question
	// holds any of them. Only the documents of such phrases are matched phrase by phrase below;
	// every other document whose front matter holds a question term matches partially, with a
	// weight accumulated over the front-matter index. The cost follows the postings of the
	// question's terms, not the corpus.
	hits := l.PhraseHits(query)
	defer hits.Release()
	// A keyword, entity or category phrase the question holds whole makes its document a phrased
	// one. A title never counts as whole (it matches by weight below), and titleHeld tells
	// whether it makes its document a phrased one: only when it matches (the question holds at
	// least half of its IDF weight, as below): a document whose title the question cannot match
	// and that has no whole phrase gets the same weight from the front-matter postings, and a
	// common title word would otherwise send thousands of documents through the loop below.
	titleHeld := func(doc int) bool {
		want := l.TitleIDF(doc)
		if want <= 0 {
			return false
		}
		var have float64
		for _, t := range l.Front(doc).Title() {
			if x, ok := weightOf(t); ok {
				have += l.IDFOf(t) * x
			}
		}
		return have*2 >= want
	}
	// The documents with a whole phrase or a matching title, ascending; the phrases the question
	// holds whole, ascending: by document, then kind. The scratch keeps their arrays for the
	// next call (whole is consumed from its front below). One pass over the phrases hit: on a
	// large corpus a common word hits thousands, most of which match neither way.
	phrased, whole := sc.phrased[:0], sc.whole[:0]
	nKeywords, nEntities := 0, 0
	for _, p := range hits.Touched() {
		kind, words := l.PhraseShape(p)
		if kind == lexical.PhraseTitle {
			if doc := l.PhraseDoc(p); titleHeld(doc) {
				phrased = append(phrased, doc)
			}
			continue
		}
		if hits.Count(p) != words {
			continue
		}
		phrased, whole = append(phrased, l.PhraseDoc(p)), append(whole, p)
		switch kind {
		case lexical.PhraseKeyword:
			nKeywords++
		case lexical.PhraseEntity:
			nEntities++
		}
	}
	sc.phrased, sc.whole = phrased, whole
	// The hints hold at most the keywords and entities held whole.
	hints := lookup.L0Hints{MatchedTitles: []string{}, MatchedKeywords: make([]string, 0, nKeywords),
		Domains: []string{}, Entities: make([]string, 0, nEntities)}
	slices.Sort(phrased)
	phrased = slices.Compact(phrased)
	held := frontHolds(l, query, phrased, sc)
	slices.Sort(whole)
	matches := slices.Grow(sc.matches[:0], len(phrased))
	full, inTitle := sc.full[:0], sc.inTitle[:0]
	defer func() { sc.full, sc.inTitle = full, inTitle }()
	// The matches' named phrases and covered terms share one backing array each: every match
	// holds its own stretch of them.
	named := slices.Grow(sc.named[:0], len(whole))
	sc.named = named
	covered := sc.covered[:0]
	defer func() { sc.covered = covered }()
	seenKeywords, seenEntities := sc.seenKeywords[:0], sc.seenEntities[:0]
	defer func() { sc.seenKeywords, sc.seenEntities = seenKeywords, seenEntities }()
	for pi, di := range phrased {
		d, f := l.Docs[di], l.Front(di)
		// The document's whole phrases: keywords in order, then entities, then the category.
		k := 0
		for k < len(whole) {
			if l.PhraseDoc(whole[k]) != di {
				break
			}
			k++
		}
		ofDoc := whole[:k]
		whole = whole[k:]
		full = full[:0] // terms of fully matched keywords, entities, title, category
		namedFrom, coveredFrom := len(named), len(covered)
		phrases := 0
		cover := func(terms []lexical.Term) {
			counted := false
			for _, t := range terms {
				full = appendUnique(full, t)
				if _, syn := viaHas(t); !syn && l.FrontCategoriesOf(t) == 1 {
					if !slices.Contains(covered[coveredFrom:], t) {
						covered = append(covered, t)
					}
					counted = true
				}
			}
			if counted {
				phrases++
			}
		}
		category, categoryPhrase := false, uint32(0)
		for _, p := range ofDoc {
			_, kind, _, words := l.Phrase(p)
			switch kind {
			case lexical.PhraseKeyword, lexical.PhraseEntity:
				if subsumed(words) {
					continue
				}
				// Many documents of a large corpus share a keyword: its text is read once.
				hinted, seen := &hints.MatchedKeywords, &seenKeywords
				if kind == lexical.PhraseEntity {
					hinted, seen = &hints.Entities, &seenEntities
				}
				if id := l.PhraseTextID(p); !slices.Contains(*seen, id) {
					*seen = append(*seen, id)
					_, text := l.PhraseText(p)
					*hinted = appendNew(*hinted, text)
				}
				rule, bridged := synonym(words)
				named = append(named, phraseReason{phrase: p, bridged: bridged, rule: rule})
				cover(words)
			case lexical.PhraseCategory:
				category, categoryPhrase = true, p
			}
		}
		var have float64
		inTitle = inTitle[:0]
		for _, t := range f.Title() {
			if x, ok := weightOf(t); ok {
				have += l.IDFOf(t) * x
				inTitle = append(inTitle, t)
			}
		}
		want := l.TitleIDF(di)
		title := want > 0 && have*2 >= want
		if title {
			hints.MatchedTitles = append(hints.MatchedTitles, d.Title)
			cover(inTitle)
		}
		if category {
			cover(f.Category())
		}
		// Question terms that occur in the front matter only as part of a longer phrase count
		// at partialWeight: "speeding ticket" still leans towards "speeding fine".
		var docWeight, evidence float64
		partial := false
		for q, t := range query {
			var w float64
			if slices.Contains(full, t) {
				w = qw[q].full
			} else if held != nil && held[pi]&(1<<q) != 0 || held == nil && f.Has(t) {
				w = qw[q].partial
				partial = true
			}
			evidence += w
			if !qw[q].generic {
				docWeight += w
			}
		}
		if docWeight == 0 {
			named, covered = named[:namedFrom], covered[:coveredFrom]
			continue
		}
		matches = append(matches, l0Match{doc: di, weight: docWeight, evidence: evidence, phrases: phrases,
			covered: covered[coveredFrom:len(covered):len(covered)],
			named:   named[namedFrom:len(named):len(named)], title: title, category: category, categoryPhrase: categoryPhrase, partial: partial})
	}
	// The other documents match partially: their weight is accumulated term by term in the
	// question's order, as a phrased document's is, so that equal evidence weighs the same.
	acc := l.DocWeights()
	defer acc.Release()
	for q, t := range query {
		if qw[q].generic {
			continue
		}
		w := qw[q].partial
		// Both lists ascend: one walk over them finds the documents not phrased.
		k := 0
		for _, d := range l.FrontDocs(t) {
			for k < len(phrased) && phrased[k] < int(d) {
				k++
			}
			if k == len(phrased) || phrased[k] != int(d) {
				acc.Add(d, w)
			}
		}
	}
	matches = leadingOrTop(matches, acc, sections)
	sc.matches = matches
	// A partial match's evidence: its weight and the generic terms its front matter holds.
	for i := range matches {
		m := &matches[i]
		if m.evidence != 0 {
			continue
		}
		m.evidence = m.weight
		front := l.Front(m.doc)
		for q, t := range query {
			if qw[q].generic && front.Has(t) {
				m.evidence += qw[q].partial
			}
		}
	}
	for i := range matches[:min(len(matches), sections)] {
		matches[i].passage = l.BestSection(matches[i].doc, query)
	}
	hints.Domains = strongDomains(l, leading(matches))
	return hints, matches
}

// frontHolds returns, for each of the documents phrased (ascending), a word whose bit q is set
// when the document's front matter holds query[q]; nil for a query of more than 64 terms, whose
// documents are searched term by term. Each term's front-matter documents are walked beside
// phrased, or phrased's documents looked up in them when they are far longer: the cost follows
// the postings, not documents times terms.
func frontHolds(l *lexical.Lang, query []lexical.Term, phrased []int, sc *l0Scratch) []uint64 {
	if len(query) > 64 || len(phrased) == 0 {
		return nil
	}
	held := slices.Grow(sc.held[:0], len(phrased))[:len(phrased)]
	clear(held)
	sc.held = held
	for q, t := range query {
		docs, bit := l.FrontDocs(t), uint64(1)<<q
		if len(docs) > 8*len(phrased) {
			for i, d := range phrased {
				if _, ok := slices.BinarySearch(docs, uint32(d)); ok {
					held[i] |= bit
				}
			}
			continue
		}
		for i, j := 0, 0; i < len(docs) && j < len(phrased); {
			switch d := int(docs[i]); {
			case d < phrased[j]:
				i++
			case d > phrased[j]:
				j++
			default:
				held[j] |= bit
				i++
				j++
			}
		}
	}
	return held
}

// leadingOrTop returns, best first (ties in document id order), the matches any caller reads:
// the leading ones (see leading) and at least the first n, from the phrased matches and the
// partially matched documents' weights in acc. The other matches are never read, so they are not
// made: a question of common words matches thousands of documents partially.
func leadingOrTop(phrased []l0Match, acc *lexical.DocWeights, n int) []l0Match {
	// The best weight and the n-th best over both sets, in one pass over each: a match at or
	// above the n-th best, or leading, is kept.
	best := 0.0
	var buf [16]float64
	top := buf[:0]
	if n+1 > len(buf) {
		top = make([]float64, 0, n+1)
	}
	offer := func(w float64) {
		best = max(best, w)
		if n == 0 || len(top) == n && w <= top[n-1] {
			return // top holds weights only: an equal one changes nothing
		}
		i, _ := slices.BinarySearchFunc(top, w, func(x, y float64) int { return cmpDesc(x, y) })
		top = slices.Insert(top, i, w)
		if len(top) > n {
			top = top[:n]
		}
	}
	for _, m := range phrased {
		offer(m.weight)
	}
	for _, d := range acc.Touched() {
		offer(acc.Weight(d))
	}
	cut := best / 2
	switch {
	case len(top) < n:
		cut = 0 // fewer matches than asked for: every one is read
	case n > 0:
		cut = min(cut, top[n-1])
	}
	kept := slices.DeleteFunc(phrased, func(m l0Match) bool { return m.weight < cut })
	for _, d := range acc.Touched() {
		if w := acc.Weight(d); w >= cut {
			kept = append(kept, l0Match{doc: int(d), weight: w, partial: true})
		}
	}
	// Ties go by document id, as they would among all matches in id order.
	slices.SortFunc(kept, func(a, b l0Match) int { return cmp.Or(cmpDesc(a.weight, b.weight), cmp.Compare(a.doc, b.doc)) })
	return kept
}

// Strong L0 evidence for a domain: the question holds at least minDomainPhrases whole phrases of
// the front matter of that domain's leading documents (keywords, entities, titles, the category
// itself) that point to that domain alone, covering at least minDomainTerms distinct question
// terms that no other domain's front matter has. One stray keyword ("lock", "card"), or words
// every procedure names ("customer", "vehicle"), are no evidence for a domain: they give no hint
// and no L1 filter.
const (
	minDomainPhrases = 2
	minDomainTerms   = 2
)

// strongDomains returns the categories of the leading matches with strong evidence, in order of
// their best match. Several strong domains are ambiguous, and so filter nothing.
func strongDomains(l *lexical.Lang, leading []l0Match) []string {
	// The categories in order of their best match; there are few, so they are searched.
	type evidence struct {
		domain   uint32
		category string
		phrases  int
		terms    []lexical.Term
	}
	var buf [8]evidence
	by := buf[:0]
	for _, m := range leading {
		id, c := l.Domain(m.doc)
		if c == "" {
			continue
		}
		i := slices.IndexFunc(by, func(e evidence) bool { return e.domain == id })
		if i < 0 {
			i = len(by)
			by = append(by, evidence{domain: id, category: c})
		}
		e := &by[i]
		e.phrases += m.phrases
		for _, t := range m.covered {
			e.terms = appendUnique(e.terms, t)
		}
	}
	out := []string{}
	for _, e := range by {
		if e.phrases >= minDomainPhrases && len(e.terms) >= minDomainTerms {
			out = append(out, e.category)
		}
	}
	return out
}

// leading returns the matches whose weight is at least half the best one's (matches are sorted).
// They make the domains and take part in fusion; the others are hints, and evidence only when
// L1 has nothing.
func leading(matches []l0Match) []l0Match {
	for i, m := range matches {
		if m.weight*2 < matches[0].weight {
			return matches[:i]
		}
	}
	return matches
}

func appendNew(list []string, s string) []string {
	if s == "" {
		return list
	}
	return appendUnique(list, s)
}

func appendUnique[T comparable](list []T, x T) []T {
	if slices.Contains(list, x) {
		return list
	}
	return append(list, x)
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}
