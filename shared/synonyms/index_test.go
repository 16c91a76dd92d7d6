package synonyms

import (
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The hashed index Expand looks terms up in finds what a binary search over the sorted keys
// finds: expandSorted is Expand over a binary search of the sorted keys, and both are run on the
// embedded rule files over random questions made of the rules' own tokens, their inflections,
// fillers and other words.
func TestExpandIndexMatchesSortedSearch(t *testing.T) {
	fold := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == ' ' || r == '\'' || r == '-' })
	}
	stem := func(s string) string { return strings.TrimSuffix(s, "s") }
	fillers := map[string]bool{"the": true, "is": true, "s": true, "der": true, "ist": true}
	filler := func(tok string) bool { return fillers[tok] }
	found := 0
	for _, rf := range embeddedRules(t) {
		f, set := rf.path, rf.set
		for _, stemmed := range []bool{false, true} {
			var m *Matcher
			if stemmed {
				m = set.CompileStemmed(fold, stem)
			} else {
				m = set.Compile(fold)
			}
			words := append(m.Vocabulary(), "the", "is", "s", "der", "ist", "other", "x")
			for _, w := range m.Vocabulary()[:min(200, len(m.vocab))] {
				words = append(words, w+"s")
			}
			rng := rand.New(rand.NewPCG(1, uint64(rf.size)))
			for range 3000 {
				toks := make([]string, rng.IntN(12))
				for i := range toks {
					toks[i] = words[rng.IntN(len(words))]
				}
				// Runs of a real term's tokens, so that longer terms are found and followed.
				if len(m.keys) > 0 && rng.IntN(2) == 0 {
					k := strings.Split(m.keys[rng.IntN(len(m.keys))], keySep)
					at := rng.IntN(len(toks) + 1)
					toks = append(toks[:at], append(k, toks[at:]...)...)
				}
				var stems []string
				if stemmed {
					stems = make([]string, len(toks))
					for i, tok := range toks {
						stems[i] = stem(tok)
					}
				}
				got, want := m.Expand(toks, stems, func(i int) bool { return filler(toks[i]) }), m.expandSorted(toks, stems, filler)
				found += len(got)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s, stemmed %v, %q: %v, want %v", f, stemmed, toks, got, want)
				}
				// With each token's start kept, as a question analyser keeps them: the
				// follows bits pass over second tokens no term goes on with, and miss none.
				starts := make([]Start, len(toks))
				for i, tok := range toks {
					stem := tok
					if stems != nil {
						stem = stems[i]
					}
					starts[i] = m.Kept(m.StartOf(tok, stem), stem)
				}
				if got := m.AppendExpandFrom(nil, toks, stems, starts, func(i int) bool { return filler(toks[i]) }); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s, stemmed %v, %q with kept starts: %v, want %v", f, stemmed, toks, got, want)
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("no expansion found: the questions test nothing")
	}
}

// TestFollowsHoldEverySecondToken: the start of a term's first token has the bit of its second
// token in follows, for every term of several tokens of the embedded rules, and of few other
// tokens (the bits are what tells a question's tokens apart).
func TestFollowsHoldEverySecondToken(t *testing.T) {
	fold := func(s string) []string { return strings.Fields(strings.ToLower(s)) }
	longer, set := 0, 0
	for _, rf := range embeddedRules(t) {
		f, m := rf.path, rf.set.Compile(fold)
		for _, k := range m.keys {
			toks := strings.Split(k, keySep)
			if len(toks) < 2 {
				continue
			}
			s := m.Kept(m.StartOf(toks[0], toks[0]), toks[0])
			if !s.longer || s.follows&followBit(toks[1]) == 0 {
				t.Fatalf("%s: the start of %q (longer %v) lacks the bit of %q", f, toks[0], s.longer, toks[1])
			}
			longer++
			set += bits.OnesCount64(s.follows)
		}
	}
	if longer == 0 {
		t.Fatal("no term of several tokens: the test tests nothing")
	}
	if mean := float64(set) / float64(longer); mean > 32 {
		t.Errorf("the starts of terms of several tokens have %.1f of 64 follows bits set on average: they tell little apart", mean)
	}
}

// ruleFile is one embedded rule file: its path, its size in bytes and its rules.
type ruleFile struct {
	path string
	size int
	set  *Set
}

// embeddedRules parses every embedded rule file.
func embeddedRules(t *testing.T) []ruleFile {
	files, _ := filepath.Glob("../../knowledge/synonyms/*/*.txt")
	if len(files) == 0 {
		t.Fatal("no rule files")
	}
	var out []ruleFile
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		set, err := Parse(f, strings.NewReader(string(src)))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ruleFile{path: f, size: len(src), set: set})
	}
	return out
}

func (m *Matcher) expandSorted(tokens, stems []string, filler func(string) bool) []Expansion {
	if stems == nil {
		stems = tokens
	}
	if len(tokens) > MaxTokens {
		tokens = tokens[:MaxTokens]
	}
	var out []Expansion
	// A term of one token is searched as the token itself; the key of a longer one, stems[i:j],
	// is built in buf, so that trying longer terms allocates nothing for any but the longest keys.
	var buf [64]byte
	for i := 0; i < len(tokens); {
		best, end := -1, 0
		// A term of one token is the token itself; a longer term goes on from the token's stem.
		if at, found := search(m.keys, tokens[i]); found {
			best, end = at, i+1
		}
		// One search finds a term and tells whether a longer one starts with its tokens: keySep
		// sorts before every byte of a token, so those keys follow it directly.
		at, found := search(m.keys, stems[i])
		if found {
			at++
		}
		var key []byte
		skipped := 0
		for j := i + 1; j < len(tokens) && at < len(m.keys); j++ {
			if key == nil {
				if !continues(m.keys[at], stems[i]) {
					break
				}
				key = append(buf[:0], stems[i]...)
			} else if !continues(m.keys[at], key) {
				break
			}
			n := len(key)
			key = append(append(key, keySep...), stems[j]...)
			next, nfound := search(m.keys, key)
			if nfound {
				next++
			}
			if !nfound && (next == len(m.keys) || !continues(m.keys[next], key)) {
				// No term goes on with this token: pass over it if it is a filler.
				key = key[:n]
				if filler != nil && skipped < MaxFillers && filler(tokens[j]) {
					skipped++
					continue
				}
				break
			}
			at, skipped = next, 0
			if nfound {
				best, end = next-1, j+1
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

// continues reports whether k is a longer term whose first tokens are key's.
func continues[K string | []byte](k string, key K) bool {
	return len(k) > len(key) && k[len(key)] == keySep[0] && k[:len(key)] == string(key)
}

// search returns where key is, or would be, among the sorted keys, and whether it is there, as
// slices.BinarySearch would; comparing with a []byte key as a string copies nothing.
func search[K string | []byte](keys []string, key K) (int, bool) {
	lo, hi := 0, len(keys)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if keys[h] < string(key) {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo, lo < len(keys) && keys[lo] == string(key)
}
