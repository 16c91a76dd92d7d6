package lexical

import (
	"cmp"
	"slices"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// L0, the keyword layer: a question's terms matched against every document's front matter
// (title, category, keywords, entities) through the inverted phrase and front-matter indexes.
// MatchFront is the one call; its steps (resolve the terms, the phrases they hit, the documents
// with a whole phrase or a matching title, the documents matched only partially, the partial
// matches' evidence) are methods of frontQuery.

// FrontMatch is one document matched by its front matter.
type FrontMatch struct {
	Doc    int
	Weight float64 // sum of the IDF of the query terms the front matter covers, generic ones aside
	// Evidence is Weight with the generic terms (see queryWeight) counted too: the lexical
	// evidence rule weighs all the question's words the front matter holds; only the ranking
	// leaves those out.
	Evidence float64
	// The parts of the match's hit reasons: a caller makes them into strings only for the
	// matches it returns, as most matches never become one.
	Named          []NamedPhrase // the keywords and entities the question holds whole, in phrase order
	Title          bool          // the title matched
	Category       bool          // the category matched, as the phrase CategoryPhrase
	CategoryPhrase uint32
	Partial        bool // a question term matched only part of a phrase
	// passage is the document's section that best matches the question plus one, 0 until
	// Passage chooses it from query, the question's terms.
	passage int
	query   []Term
	// phrases counts the front-matter phrases (keywords, entities, title, category) the question
	// holds whole that name this document's domain alone (a term no other category's front
	// matter has); covered lists the distinct such terms.
	phrases int
	covered []Term
}

// NamedPhrase is a keyword or entity phrase the question holds whole and, when a synonym
// bridged to it, the synonym's rule.
type NamedPhrase struct {
	Phrase  uint32
	Bridged bool
	Rule    string
}

// FrontMatches is what MatchFront finds: the matched documents, best first (see
// leadingOrTop), and the hints: the titles matched, the keywords and entities the question holds
// whole (each text once), and the categories with strong evidence among the leading matches
// (see strongDomains).
type FrontMatches struct {
	Matches                             []FrontMatch
	Titles, Keywords, Entities, Domains []string
}

// FrontScratch is MatchFront's memory, kept for the next call: its working lists and maps, and
// the arrays behind the matches it returns (matches, named, covered), which the caller keeps
// until it has done with the matches, then resets. Its zero value is ready for use.
type FrontScratch struct {
	query []Term
	// qw holds, for each term of query, what its weight adds to a document's L0 weight (see
	// queryWeight), made once for the documents' loops.
	qw     []queryWeight
	weight map[Term]float64
	// weighed holds every term of weight: most terms MatchFront asks about are no question
	// term, and a clear bit says so without asking the map.
	weighed       termFilter
	via           map[Term]string
	alts          map[Term]bool
	span          map[Term]int
	phrased       []int
	held          []uint64
	whole         []uint32
	full, inTitle []Term
	matches       []FrontMatch
	named         []NamedPhrase
	covered       []Term
	// seenKeywords and seenEntities hold the text ids (PhraseIndex.textID) of the phrases
	// already named in a lookup's hints.
	seenKeywords, seenEntities []uint32
}

// Reset empties the scratch for its next question. Maps that a long question made large are
// dropped rather than kept, since clearing one costs its size on every later call.
func (sc *FrontScratch) Reset() {
	const keep = 64
	if sc.weight == nil || len(sc.weight) > keep || len(sc.via) > keep || len(sc.alts) > keep || len(sc.span) > keep {
		sc.weight, sc.via = map[Term]float64{}, map[Term]string{}
		sc.alts, sc.span = map[Term]bool{}, map[Term]int{}
		sc.weighed = termFilter{}
		return
	}
	clear(sc.weight)
	sc.weighed = termFilter{}
	clear(sc.via)
	clear(sc.alts)
	clear(sc.span)
}

// queryWeight is what one question term adds to a document's L0 weight: full when the document's
// front matter matches it whole, partial when only as part of a phrase; generic for a term most
// procedures' front matter names (see MatchFront), which adds to a document's evidence alone.
type queryWeight struct {
	full, partial float64
	generic       bool
}

// termFilter is a 256-bit filter of terms: a term it does not hold is in no set it filters, so
// the set's map need not be asked.
type termFilter [4]uint64

// termBit is the bit of a termFilter that t sets (a multiplicative hash's top 8 bits).
func termBit(t Term) uint32 { return (uint32(t) * 2654435761) >> 24 }

func (f *termFilter) add(t Term) {
	b := termBit(t)
	f[b>>6] |= 1 << (b & 63)
}

func (f *termFilter) has(t Term) bool {
	b := termBit(t)
	return f[b>>6]&(1<<(b&63)) != 0
}

// minGenericDocs is the fewest procedures (of a language) in which a front-matter term can be
// generic, named by most of them (see resolveTerms).
const minGenericDocs = 3

// partialWeight is the share of its IDF a question term adds to a document's L0 weight when it
// matches only part of a keyword or entity phrase.
const partialWeight = 0.5

// MatchFront matches the question's terms against the front matter (title, keywords, entities,
// category) of the documents whose front matter holds any of them, found through the index's
// inverted front-matter index, so that its cost follows what matches. A keyword or entity
// matches when all of its terms are in the question, a title when the question holds at least
// half of its IDF weight. A document's weight is the IDF weight of the question terms its
// matches cover, each term counted once, plus partialWeight of the terms that occur only in
// phrases it did not fully match. It keeps the leading matches and the sections best ones
// (leadingOrTop). A match's best section is chosen when it is first asked for (FrontMatch.Passage):
// fusion takes the sections L1 returned of most matches' documents instead.
// Domains are the categories with strong L0 evidence among the leading matches (see
// strongDomains): only those become hints, and only a single one filters L1.
// strs and weights are the question's index terms and their weights (a term only a synonym gives
// weighs less); MatchFront only reads them.
// The matches live in sc: they are valid until sc is released.
func (l *Lang) MatchFront(words []textproc.Group, strs []string, weights map[string]float64, sections int, sc *FrontScratch) FrontMatches {
	if sc.weight == nil {
		sc.Reset()
	}
	q := frontQuery{l: l, sc: sc}
	q.resolveTerms(words, strs, weights)
	hits := l.phr.hits(sc.query)
	q.phraseHits(hits)
	hits.Release()
	matches := q.wholePhraseDocuments()
	acc := q.partialMatches()
	matches = leadingOrTop(matches, acc, sections)
	acc.Release()
	sc.matches = matches
	q.partialEvidence(matches)
	for i := range matches {
		matches[i].query = sc.query
	}
	q.hints.Domains = strongDomains(l, Leading(matches))
	q.hints.Matches = matches
	return q.hints
}

// Passage returns the section of the match's document that best matches the question (the
// passage of l holding the most idf weight of its terms; the document's first when none holds
// any), chosen the first time it is asked for and kept in m. l is the Lang whose MatchFront made
// m; like the match, it is valid until that call's scratch is reset.
func (m *FrontMatch) Passage(l *Lang) int {
	if m.passage == 0 {
		m.passage = l.post.bestSection(m.Doc, m.query) + 1
	}
	return m.passage - 1
}

// frontQuery is one question's match against a language's front matter, made in steps: resolve
// the terms, find the phrases they hit, match the documents with a whole phrase or a matching
// title, then the documents they match only partially, then the partial matches' evidence. Its
// lists live in the scratch sc.
type frontQuery struct {
	l  *Lang
	sc *FrontScratch
	// viaTerms holds every term of sc.via, which is asked about every word of every phrase the
	// question holds whole.
	viaTerms termFilter
	hints    FrontMatches
}

// resolveTerms finds the question's terms the index holds, in question order, with their
// weights (a term only a synonym gives weighs less) in sc.query, sc.qw and sc.weight; the
// synonym rule behind each term only a synonym gives in sc.via; every synonym's term in sc.alts;
// and, for a question term that is part of a synonym term of several words, how many words
// that term has in sc.span (see subsumed).
func (q *frontQuery) resolveTerms(words []textproc.Group, strs []string, weights map[string]float64) {
	l, sc := q.l, q.sc
	sc.query, sc.qw = slices.Grow(sc.query[:0], len(strs)), slices.Grow(sc.qw[:0], len(strs))
	for _, s := range strs {
		if t, ok := l.Lookup(s); ok {
			sc.query = append(sc.query, t)
			x := cmp.Or(weights[s], 1)
			sc.weight[t] = x
			sc.weighed.add(t)
			// A term most procedures' front matter names ("customer", "vehicle", "Kunde",
			// "Fahrzeug") is generic: it tells no procedure from another, so it adds nothing to a
			// document's L0 weight, and a document it alone matches is no L0 match. In a corpus
			// of fewer than minGenericDocs procedures no term is: there every term of one
			// procedure's front matter is in "most" of them.
			sc.qw = append(sc.qw, queryWeight{full: x * l.post.IDF(t), partial: x * partialWeight * l.post.IDF(t),
				generic: l.front.inForce >= minGenericDocs && 2*l.front.liveDocs(t) > l.front.inForce})
		}
	}
	for _, g := range words {
		for _, a := range g.Alts {
			if t, ok := l.Lookup(a.Term); ok {
				sc.alts[t] = true
			}
			if _, ok := weights[a.Term]; !ok {
				continue
			}
			if t, ok := l.Lookup(a.Term); ok {
				if _, seen := sc.via[t]; !seen {
					sc.via[t] = a.Rule
					q.viaTerms.add(t)
				}
			}
		}
	}
	for _, g := range words {
		if g.Span > 1 {
			if t, ok := l.Lookup(g.Term); ok {
				sc.span[t] = max(sc.span[t], g.Span)
			}
		}
	}
}

// weightOf returns a question term's weight; false for a term the question does not hold.
func (q *frontQuery) weightOf(t Term) (float64, bool) {
	if !q.sc.weighed.has(t) {
		return 0, false
	}
	w, ok := q.sc.weight[t]
	return w, ok
}

// via returns the synonym rule behind a term that only a synonym gives.
func (q *frontQuery) via(t Term) (string, bool) {
	if !q.viaTerms.has(t) {
		return "", false
	}
	r, ok := q.sc.via[t]
	return r, ok
}

// synonym returns the rule behind the first of terms that only a synonym gives.
func (q *frontQuery) synonym(terms []Term) (string, bool) {
	for _, t := range terms {
		if r, ok := q.via(t); ok {
			return r, true
		}
	}
	return "", false
}

// subsumed reports whether a phrase's words (two or more) are all, in the question, part of a
// longer synonym term that reads them otherwise (none of them is among the synonyms' words): in
// "phone battery is dead" the operator's phone died, and the keyword "dead battery" matches
// only partly; in "nobody can unlock" (=> "unlock", "outage") the keyword "unlock" stays.
func (q *frontQuery) subsumed(terms []Term) bool {
	if len(terms) < 2 || len(q.sc.span) == 0 {
		// One word inside a longer term is mostly what it is about; and with no term of
		// several words in the question, no phrase is inside one.
		return false
	}
	for _, t := range terms {
		if _, syn := q.via(t); syn || q.sc.span[t] <= len(terms) || q.sc.alts[t] {
			return false
		}
	}
	return true
}

// titleMatch reports whether the question matches a document's title (it holds at least half
// of the title's IDF weight), and returns the title's words the question holds, appended to
// inTitle.
func (q *frontQuery) titleMatch(doc int, inTitle []Term) (bool, []Term) {
	want := q.l.phr.titleWeight(doc)
	if want <= 0 {
		return false, inTitle
	}
	var have float64
	for _, t := range q.l.Front(doc).Title() {
		if x, ok := q.weightOf(t); ok {
			have += q.l.post.IDF(t) * x
			inTitle = append(inTitle, t)
		}
	}
	return have*2 >= want, inTitle
}

// phraseHits goes once over the front-matter phrases that hold a question term (through the
// inverted phrase index; on a large corpus a common word hits thousands, most of which match
// neither way) and keeps, ascending, the documents with a whole phrase or a matching title in
// sc.phrased, and the keyword, entity and category phrases the question holds whole in
// sc.whole: by document, then kind. A title never counts as whole (it matches by weight), and
// makes its document a phrased one only when it matches: a document whose title the question
// cannot match and that has no whole phrase gets the same weight from the front-matter
// postings (partialMatches), and a common title word would otherwise send thousands of
// documents through wholePhraseDocuments. It also makes the hints, with room for the keywords
// and entities held whole.
func (q *frontQuery) phraseHits(hits *phraseHits) {
	l, sc := q.l, q.sc
	phrased, whole := sc.phrased[:0], sc.whole[:0]
	nKeywords, nEntities := 0, 0
	for _, p := range hits.Touched() {
		kind, words := l.phr.shapeOf(p)
		if kind == PhraseTitle {
			doc := l.phr.docOf(p)
			var held bool
			if held, sc.inTitle = q.titleMatch(doc, sc.inTitle[:0]); held {
				phrased = append(phrased, doc)
			}
			continue
		}
		if hits.Count(p) != words {
			continue
		}
		phrased, whole = append(phrased, l.phr.docOf(p)), append(whole, p)
		switch kind {
		case PhraseKeyword:
			nKeywords++
		case PhraseEntity:
			nEntities++
		}
	}
	// The keywords and entities share one array, each its own stretch of it (one allocation
	// where two were made).
	named := make([]string, 0, nKeywords+nEntities)
	q.hints = FrontMatches{Titles: []string{}, Keywords: named[:0:nKeywords],
		Domains: []string{}, Entities: named[nKeywords : nKeywords : nKeywords+nEntities]}
	slices.Sort(phrased)
	sc.phrased = slices.Compact(phrased)
	slices.Sort(whole)
	sc.whole = whole
}

// wholePhraseDocuments matches the documents of sc.phrased phrase by phrase, in document order,
// and names their whole keywords and entities in the hints. The matches' named phrases and
// covered terms share one backing array each (sc.named, sc.covered): every match holds its own
// stretch of them.
func (q *frontQuery) wholePhraseDocuments() []FrontMatch {
	sc := q.sc
	held := frontHolds(q.l, sc.query, sc.phrased, sc)
	matches := slices.Grow(sc.matches[:0], len(sc.phrased))
	sc.named = slices.Grow(sc.named[:0], len(sc.whole))
	sc.covered = sc.covered[:0]
	sc.seenKeywords, sc.seenEntities = sc.seenKeywords[:0], sc.seenEntities[:0]
	whole := sc.whole
	for pi, di := range sc.phrased {
		// The document's whole phrases: keywords in order, then entities, then the category.
		k := 0
		for k < len(whole) && q.l.phr.docOf(whole[k]) == di {
			k++
		}
		var row uint64
		if held != nil {
			row = held[pi]
		}
		if m, ok := q.matchDocument(di, whole[:k], held != nil, row); ok {
			matches = append(matches, m)
		}
		whole = whole[k:]
	}
	return matches
}

// matchDocument matches one document with whole phrases ofDoc or a matching title. row has bit
// i set when the document's front matter holds query term i (when hasRow; otherwise the front
// matter is asked term by term). A document whose matches weigh nothing is no match.
func (q *frontQuery) matchDocument(di int, ofDoc []uint32, hasRow bool, row uint64) (FrontMatch, bool) {
	l, sc := q.l, q.sc
	d, f := l.Docs[di], l.Front(di)
	sc.full = sc.full[:0] // terms of fully matched keywords, entities, title, category
	namedFrom, coveredFrom := len(sc.named), len(sc.covered)
	phrases := 0
	category, categoryPhrase := false, uint32(0)
	for _, p := range ofDoc {
		_, kind, _, words := l.phr.Phrase(p)
		switch kind {
		case PhraseKeyword, PhraseEntity:
			if q.subsumed(words) {
				continue
			}
			q.hint(p, kind)
			rule, bridged := q.synonym(words)
			sc.named = append(sc.named, NamedPhrase{Phrase: p, Bridged: bridged, Rule: rule})
			phrases += q.cover(words, coveredFrom)
		case PhraseCategory:
			category, categoryPhrase = true, p
		}
	}
	title, inTitle := q.titleMatch(di, sc.inTitle[:0])
	sc.inTitle = inTitle
	if title {
		q.hints.Titles = append(q.hints.Titles, d.Title)
		phrases += q.cover(inTitle, coveredFrom)
	}
	if category {
		phrases += q.cover(f.Category(), coveredFrom)
	}
	// Question terms that occur in the front matter only as part of a longer phrase count at
	// partialWeight: "speeding ticket" still leans towards "speeding fine".
	var docWeight, evidence float64
	partial := false
	for i, t := range sc.query {
		var w float64
		if slices.Contains(sc.full, t) {
			w = sc.qw[i].full
		} else if hasRow && row&(1<<i) != 0 || !hasRow && f.Has(t) {
			w = sc.qw[i].partial
			partial = true
		}
		evidence += w
		if !sc.qw[i].generic {
			docWeight += w
		}
	}
	if docWeight == 0 {
		sc.named, sc.covered = sc.named[:namedFrom], sc.covered[:coveredFrom]
		return FrontMatch{}, false
	}
	return FrontMatch{Doc: di, Weight: docWeight, Evidence: evidence, phrases: phrases,
		covered: sc.covered[coveredFrom:len(sc.covered):len(sc.covered)],
		Named:   sc.named[namedFrom:len(sc.named):len(sc.named)], Title: title, Category: category, CategoryPhrase: categoryPhrase, Partial: partial}, true
}

// hint names a keyword or entity phrase held whole in the hints, once per text: many documents
// of a large corpus share a keyword, and its text is read once.
func (q *frontQuery) hint(p uint32, kind int) {
	hinted, seen := &q.hints.Keywords, &q.sc.seenKeywords
	if kind == PhraseEntity {
		hinted, seen = &q.hints.Entities, &q.sc.seenEntities
	}
	if id := q.l.phr.textID(p); !slices.Contains(*seen, id) {
		*seen = append(*seen, id)
		_, text := q.l.PhraseString(id)
		if text != "" && !slices.Contains(*hinted, text) {
			*hinted = append(*hinted, text)
		}
	}
}

// cover adds a fully matched phrase's terms to the document's (sc.full), and those that name
// its domain alone (a term no other category's front matter has, not given by a synonym) to its
// covered terms from coveredFrom; it returns 1 when the phrase names the domain, else 0.
func (q *frontQuery) cover(terms []Term, coveredFrom int) int {
	sc := q.sc
	counted := 0
	for _, t := range terms {
		if !slices.Contains(sc.full, t) {
			sc.full = append(sc.full, t)
		}
		if _, syn := q.via(t); !syn && q.l.front.Categories(t) == 1 {
			if !slices.Contains(sc.covered[coveredFrom:], t) {
				sc.covered = append(sc.covered, t)
			}
			counted = 1
		}
	}
	return counted
}

// partialMatches accumulates the weight of the documents not phrased whose front matter holds a
// question term: term by term in the question's order, as a phrased document's is, so that
// equal evidence weighs the same. Release the weights when done.
func (q *frontQuery) partialMatches() *docWeights {
	sc := q.sc
	acc := q.l.front.weights()
	for i, t := range sc.query {
		if sc.qw[i].generic {
			continue
		}
		w := sc.qw[i].partial
		// Both lists ascend: one walk over them finds the documents not phrased.
		k := 0
		for _, d := range q.l.front.docs(t) {
			if !q.l.front.live(d) {
				continue
			}
			for k < len(sc.phrased) && sc.phrased[k] < int(d) {
				k++
			}
			if k == len(sc.phrased) || sc.phrased[k] != int(d) {
				acc.Add(d, w)
			}
		}
	}
	return acc
}

// partialEvidence gives each partial match its evidence: its weight and the generic terms its
// front matter holds.
func (q *frontQuery) partialEvidence(matches []FrontMatch) {
	sc := q.sc
	for i := range matches {
		m := &matches[i]
		if m.Evidence != 0 {
			continue
		}
		m.Evidence = m.Weight
		front := q.l.Front(m.Doc)
		for j, t := range sc.query {
			if sc.qw[j].generic && front.Has(t) {
				m.Evidence += sc.qw[j].partial
			}
		}
	}
}

// frontHolds returns, for each of the documents phrased (ascending), a word whose bit q is set
// when the document's front matter holds query[q]; nil for a query of more than 64 terms, whose
// documents are searched term by term. Each term's front-matter documents are walked beside
// phrased, or phrased's documents looked up in them when they are far longer: the cost follows
// the postings, not documents times terms.
func frontHolds(l *Lang, query []Term, phrased []int, sc *FrontScratch) []uint64 {
	if len(query) > 64 || len(phrased) == 0 {
		return nil
	}
	held := slices.Grow(sc.held[:0], len(phrased))[:len(phrased)]
	clear(held)
	sc.held = held
	for q, t := range query {
		docs, bit := l.front.docs(t), uint64(1)<<q
		if len(docs) > 8*len(phrased) {
			for i, d := range phrased {
				if _, ok := lowerBound(docs, uint32(d)); ok {
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
func leadingOrTop(phrased []FrontMatch, acc *docWeights, n int) []FrontMatch {
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
		i, _ := slices.BinarySearchFunc(top, w, func(x, y float64) int { return cmp.Compare(y, x) })
		top = slices.Insert(top, i, w)
		if len(top) > n {
			top = top[:n]
		}
	}
	for _, m := range phrased {
		offer(m.Weight)
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
	kept := slices.DeleteFunc(phrased, func(m FrontMatch) bool { return m.Weight < cut })
	for _, d := range acc.Touched() {
		if w := acc.Weight(d); w >= cut {
			kept = append(kept, FrontMatch{Doc: int(d), Weight: w, Partial: true})
		}
	}
	// Ties go by document id, as they would among all matches in id order.
	slices.SortFunc(kept, func(a, b FrontMatch) int { return cmp.Or(cmp.Compare(b.Weight, a.Weight), cmp.Compare(a.Doc, b.Doc)) })
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
func strongDomains(l *Lang, leading []FrontMatch) []string {
	// The categories in order of their best match; there are few, so they are searched.
	type evidence struct {
		domain   uint32
		category string
		phrases  int
		terms    int
	}
	var buf [8]evidence
	by := buf[:0]
	// covered holds each category's distinct terms as (its index in by, the term), in one list
	// on the stack where a list per category took an allocation each.
	var cbuf [32][2]uint32
	covered := cbuf[:0]
	for _, m := range leading {
		id, c := l.front.Domain(m.Doc)
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
			if k := [2]uint32{uint32(i), uint32(t)}; !slices.Contains(covered, k) {
				covered = append(covered, k)
				e.terms++
			}
		}
	}
	out := []string{}
	for _, e := range by {
		if e.phrases >= minDomainPhrases && e.terms >= minDomainTerms {
			out = append(out, e.category)
		}
	}
	return out
}

// Leading returns the matches whose weight is at least half the best one's (matches are sorted).
// They make the domains and take part in fusion; the others are hints, and evidence only when
// L1 has nothing.
func Leading(matches []FrontMatch) []FrontMatch {
	for i, m := range matches {
		if m.Weight*2 < matches[0].Weight {
			return matches[:i]
		}
	}
	return matches
}
