package synonyms

import (
	"slices"
	"strings"
)

// Bounds of the matcher's work and output.
const (
	// MaxTokens is how many tokens of a question Expand looks at: a question of 2,000 characters
	// has at most 1,000 tokens.
	MaxTokens = 2048
	// MaxAlternatives bounds the alternatives of one term, over every rule that has it; the
	// first ones, in rule order, are kept.
	MaxAlternatives = 32
	// MaxExpansions bounds the expansions Expand returns for one question.
	MaxExpansions = 256
	// MaxFillers is how many filler tokens in a row a term may pass over (see Expand).
	MaxFillers = 2
)

// Expansion is one alternative for a span of a question's tokens.
type Expansion struct {
	// Start and End are the span [Start, End) of the question's tokens that matched a term.
	Start, End int
	// Tokens are the folded tokens of the alternative. They are shared: do not modify them.
	Tokens []string
	// Rule is the matched term as the rule writes it, e.g. "Handy", for hit reasons.
	Rule string
	// File and Line are where the rule is written (Rule.Source is "<file>:<line>").
	File string
	Line int
}

// Matcher finds the terms of a Set in folded tokens. It is safe for concurrent use. It is flat
// arrays: the terms as sorted keys (a term's folded tokens joined by keySep), and their
// alternatives as parallel integer arrays into tables of strings (the vocabulary, the rules'
// terms, the rule files), so that restoring one from a prebuilt index builds no per-term or
// per-alternative structure (see Flat).
type Matcher struct {
	keys     []string // sorted; each has alternatives
	altStart []uint32 // the alternatives of keys[i] are i = altStart[i]..altStart[i+1], in rule order
	// Per alternative: its folded tokens tokens[altFrom:altTo], the rule's term as written
	// ruleTerms[altTerm], and the rule's source files[altFile], line altLine.
	altFrom, altTo   []uint32
	altTerm          []uint32
	altFile, altLine []uint32
	tokens           []string // the alternatives' tokens, each one of vocab
	ruleTerms        []string
	files            []string
	vocab            []string
	terms            int
	slots            []uint32 // the index of keys (see indexKeys)
}

// keySep joins a term's folded tokens into its key; folded tokens never hold it.
const keySep = "\x00"

// builder collects a Set's terms in a trie while Compile folds them, dropping repeated
// alternatives and keeping at most MaxAlternatives per term.
type builder struct {
	root  map[string]*node
	terms int
}

// built is one alternative as Compile collects it.
type built struct {
	tokens       []string
	term, source string
}

type node struct {
	next map[string]*node
	alts []built // in rule order
	seen map[string]bool
}

// Compile folds every term with fold, which must split text into tokens the way the question
// will be split (for the project's analyzer, Analyzer.Tokens: lower case, no diacritics,
// "won't" as "won", "t"), and returns the matcher. An equivalence rule gives each of its terms
// the others as alternatives; a mapping gives each left-hand term the right-hand terms. A term
// whose tokens are all the same as its alternative's is not its own alternative.
func (s *Set) Compile(fold func(string) []string) *Matcher { return s.CompileStemmed(fold, nil) }

// CompileStemmed is Compile with a term of two or more tokens matched by its tokens' stems, so
// that "phone batteries died" and "cars won't open" meet the rules written for "phone battery
// died" and "car won't open"; Expand then needs the question's stems too. A one-token term stays
// matched by its token: a single word's stem is too wide ("keying" is not "key", "detailing" not
// "details"). A nil stem is Compile.
func (s *Set) CompileStemmed(fold func(string) []string, stem func(string) string) *Matcher {
	b := &builder{root: map[string]*node{}}
	vocab := map[string]bool{}
	folded := func(terms []string) [][]string {
		out := make([][]string, len(terms))
		for i, t := range terms {
			out[i] = fold(t)
			for _, tok := range out[i] {
				vocab[tok] = true
			}
		}
		return out
	}
	keys := func(folded [][]string) [][]string {
		if stem == nil {
			return folded
		}
		out := make([][]string, len(folded))
		for i, toks := range folded {
			out[i] = toks
			if len(toks) > 1 {
				out[i] = make([]string, len(toks))
				for j, t := range toks {
					out[i][j] = stem(t)
				}
			}
		}
		return out
	}
	for _, r := range s.Rules() {
		left := folded(r.Terms)
		from := keys(left)
		if !r.Mapping() {
			for i := range left {
				for j := range left {
					if i != j && !slices.Equal(from[i], from[j]) {
						b.add(from[i], left[j], r.Terms[i], r.Source)
					}
				}
			}
			continue
		}
		right := folded(r.Targets)
		targets := keys(right)
		for i := range left {
			// A term that stems like one of its targets is that target ("charge station" is
			// "charging station"): the question already holds it.
			if slices.ContainsFunc(targets, func(t []string) bool { return slices.Equal(t, from[i]) }) {
				continue
			}
			for j := range right {
				b.add(from[i], right[j], r.Terms[i], r.Source)
			}
		}
	}
	words := make([]string, 0, len(vocab))
	for tok := range vocab {
		words = append(words, tok)
	}
	slices.Sort(words)
	return b.flatten(words)
}

func (b *builder) add(key, alt []string, term, source string) {
	if len(key) == 0 || len(alt) == 0 || slices.Equal(key, alt) {
		return
	}
	n := b.root[key[0]]
	if n == nil {
		n = &node{}
		b.root[key[0]] = n
	}
	for _, tok := range key[1:] {
		if n.next == nil {
			n.next = map[string]*node{}
		}
		c := n.next[tok]
		if c == nil {
			c = &node{}
			n.next[tok] = c
		}
		n = c
	}
	if n.seen == nil {
		n.seen = map[string]bool{}
		b.terms++
	}
	k := strings.Join(alt, keySep)
	if n.seen[k] || len(n.alts) == MaxAlternatives {
		return
	}
	n.seen[k] = true
	n.alts = append(n.alts, built{tokens: alt, term: term, source: source})
}

// Expand returns the alternatives for the terms found in tokens, the folded tokens of a question
// in order with stop words kept, and stems, their stems (nil when the matcher was compiled
// without stemming). Matching is leftmost-longest and without overlaps: at each position the
// longest term that starts there wins ("phone died" over "phone"), and matching goes on after
// its end. Expansions are in token order, a term's alternatives in rule order. It looks at the
// first MaxTokens tokens and returns at most MaxExpansions expansions.
//
// filler, when not nil, names by index the tokens a term of several words may pass over where it
// has no token of its own (articles, possessives, forms of "be": "phone is dead" and "the customer's
// phone died" meet "phone dead" and "customer phone died"), at most MaxFillers in a row. A term
// never starts or ends on one it passed over.
func (m *Matcher) Expand(tokens, stems []string, filler func(i int) bool) []Expansion {
	return m.AppendExpand(nil, tokens, stems, filler)
}

// AppendExpand is Expand appending the expansions to dst[:0], an array a caller that expands
// question after question lends again once done with them.
func (m *Matcher) AppendExpand(dst []Expansion, tokens, stems []string, filler func(i int) bool) []Expansion {
	return m.AppendExpandFrom(dst, tokens, stems, nil, filler)
}

// Start is what the matcher knows of one token as the start of a term (StartOf): the term that
// is the token itself, and whether a term of several tokens starts with the token's stem.
type Start struct {
	key    int32 // the term that is the token itself, -1 for none
	longer bool
	known  bool // made by StartOf: the zero Start is looked up again
	// follows has followBit(s) set for the stem s of every second token of the terms of several
	// tokens that start with the token's stem (Kept): a token whose bit is clear goes on none of
	// them, which is told without looking the two up. All bits are set in a start not kept, and
	// when the stem starts too many terms to list (maxFollows).
	follows uint64
}

// followBit is a stem's bit in Start.follows.
func followBit(stem string) uint64 { return 1 << (hash(stem) & 63) }

// maxFollows is the most terms of several tokens Kept reads for one stem's follows.
const maxFollows = 256

// StartOf is what the matcher knows of the token with the stem as the start of a term. A caller
// that meets the same tokens again and again (a question analyser's cache of words) keeps it, so
// that expanding a question looks up only the terms of several tokens its tokens start. Every
// bit of its follows is set: Kept reads them, for a start that is kept.
func (m *Matcher) StartOf(token, stem string) Start {
	s := Start{key: -1, known: true, follows: ^uint64(0)}
	first, ok := m.lookup(token)
	if ok && first.key >= 0 {
		s.key = first.key
	}
	if stem != token {
		first, ok = m.lookup(stem)
	}
	s.longer = ok && first.longer
	return s
}

// Kept is s, StartOf a token with the stem, with the follows of the stem read from the keys, so
// that expanding a question looks up only the terms whose second token may go on them. It reads
// up to maxFollows keys: a caller calls it for a start it keeps (once per word of its cache),
// not for every token it meets.
func (m *Matcher) Kept(s Start, stem string) Start {
	if s.longer {
		s.follows = m.follows(stem)
	}
	return s
}

// follows is Start.follows of a stem: the keys that start with it and keySep are a run of the
// sorted keys, each followed by its second token.
func (m *Matcher) follows(stem string) uint64 {
	lead := stem + keySep
	i, _ := slices.BinarySearch(m.keys, lead)
	var bits uint64
	for n := 0; i < len(m.keys) && strings.HasPrefix(m.keys[i], lead); i, n = i+1, n+1 {
		if n == maxFollows {
			return ^uint64(0)
		}
		second, _, _ := strings.Cut(m.keys[i][len(lead):], keySep)
		bits |= followBit(second)
	}
	return bits
}

// AppendExpandFrom is AppendExpand with starts[i], when it is known, StartOf(tokens[i], stems[i])
// of this matcher.
func (m *Matcher) AppendExpandFrom(dst []Expansion, tokens, stems []string, starts []Start, filler func(i int) bool) []Expansion {
	if stems == nil {
		stems = tokens
	}
	if len(tokens) > MaxTokens {
		tokens = tokens[:MaxTokens]
	}
	out := dst[:0]
	// A term of one token is looked up as the token itself; the key of a longer one, stems[i:j],
	// is built in buf, so that trying longer terms allocates nothing for any but the longest keys.
	var buf [64]byte
	for i := 0; i < len(tokens); {
		best, end := -1, 0
		// A term of one token is the token itself; a longer term goes on from the token's stem.
		var first Start
		if i < len(starts) {
			first = starts[i]
		}
		if !first.known {
			first = m.StartOf(tokens[i], stems[i])
		}
		if first.key >= 0 {
			best, end = int(first.key), i+1
		}
		if first.longer {
			key := append(buf[:0], stems[i]...)
			skipped := 0
			for j := i + 1; j < len(tokens); j++ {
				n := len(key)
				// The second token of a term: its bit in follows says whether any term goes on
				// with it, most often that none does.
				found := n > len(stems[i]) || first.follows&followBit(stems[j]) != 0
				var next prefix
				if found {
					key = append(append(key, keySep...), stems[j]...)
					next, found = m.lookup(string(key))
				}
				if !found {
					// No term goes on with this token: pass over it if it is a filler.
					key = key[:n]
					if filler != nil && skipped < MaxFillers && filler(j) {
						skipped++
						continue
					}
					break
				}
				skipped = 0
				if next.key >= 0 {
					best, end = int(next.key), j+1
				}
				if !next.longer {
					break
				}
			}
		}
		if best < 0 {
			i++
			continue
		}
		for a := m.altStart[best]; a < m.altStart[best+1]; a++ {
			if len(out) == MaxExpansions {
				return out
			}
			from, to := m.altFrom[a], m.altTo[a]
			out = append(out, Expansion{Start: i, End: end, Tokens: m.tokens[from:to:to], Rule: m.ruleTerms[m.altTerm[a]],
				File: m.files[m.altFile[a]], Line: int(m.altLine[a])})
		}
		i = end
	}
	return out
}

// The matcher's index is an open-addressing hash table (linear probing, FNV-1a) of every key and
// every run of a key's first tokens, so that Expand finds a term, or that none starts with its
// tokens, in one probe or two instead of a binary search over the keys. It is two uint32 a slot,
// made with the matcher's arrays and kept with them in a prebuilt index (Flat.Slots): a cold
// start neither builds it nor reads the keys to do so. An empty slot is 0, 0; else the first is
// the entry's key position plus one and the second the length of the string (the key, or the
// start of the key at that position), with slotLonger set when a longer key starts with it.
const slotLonger = 1 << 31

// prefix is what the index knows of a string: the key's position (-1 when the string is only
// the start of longer keys), and whether a longer key starts with it.
type prefix struct {
	key    int32
	longer bool
}

// lookup returns what the index knows of s; ok is false for a string that is no term and starts
// none.
func (m *Matcher) lookup(s string) (p prefix, ok bool) {
	slots := m.slots
	if len(slots) == 0 {
		return prefix{}, false
	}
	mask := uint64(len(slots)/2 - 1)
	for h := hash(s) & mask; ; h = (h + 1) & mask {
		at1, n := slots[2*h], slots[2*h+1]
		if at1 == 0 {
			return prefix{}, false
		}
		at, length := int(at1-1), int(n&^slotLonger)
		if length != len(s) || m.keys[at][:length] != s {
			continue
		}
		p.key, p.longer = -1, n&slotLonger != 0
		if len(m.keys[at]) == length {
			p.key = int32(at)
		}
		return p, true
	}
}

// hash is FNV-1a: the table is written into prebuilt indexes, so its hash must not change with
// the process.
func hash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// indexKeys returns the index of sorted keys: a power of two of slots, at most 5/8 of them used
// (the embedded rules fill at most 55 % of 16,384 per language), so that a string that is no term, most
// of a question's, is told in about three probes.
func indexKeys(keys []string) []uint32 {
	n := len(keys)
	for _, k := range keys {
		n += strings.Count(k, keySep)
	}
	size := 2
	for 5*size < 8*n {
		size <<= 1
	}
	slots := make([]uint32, 2*size)
	mask := uint64(size - 1)
	// put enters s, the start of keys[at], or marks it as the start of a longer key.
	put := func(s string, at int, longer bool) {
		for h := hash(s) & mask; ; h = (h + 1) & mask {
			at1, n := slots[2*h], slots[2*h+1]
			if at1 == 0 {
				slots[2*h], slots[2*h+1] = uint32(at+1), uint32(len(s))
				if longer {
					slots[2*h+1] |= slotLonger
				}
				return
			}
			if length := int(n &^ slotLonger); length == len(s) && keys[at1-1][:length] == s {
				if longer {
					slots[2*h+1] |= slotLonger
				}
				return // the first of repeated keys stays, as a search would find it
			}
		}
	}
	// In key order, a key comes before the longer keys that start with it, so that its entry
	// names it and not one of them.
	for i, k := range keys {
		put(k, i, false)
		for j := 0; j < len(k); j++ {
			if k[j] == keySep[0] {
				put(k[:j], i, true)
			}
		}
	}
	return slots
}

// Vocabulary returns every folded token of every term, sorted and without repeats: the words
// the compound splitter should know so that a compound of them ("Putzrechnung") is split.
func (m *Matcher) Vocabulary() []string { return slices.Clone(m.vocab) }

// Terms is the number of distinct folded terms that have alternatives.
func (m *Matcher) Terms() int { return m.terms }
