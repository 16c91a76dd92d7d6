package textproc

// Splitter splits German compounds into parts that occur on their own in a known vocabulary,
// so that "Scheibe" finds "Windschutzscheibe" and "Akkustand" finds "Akku". It is built once per
// corpus and only read afterwards.
type Splitter struct {
	a      *Analyzer
	tokens map[string]struct{}
	stems  map[string]struct{}
}

// minPart is the shortest compound part, in bytes of folded text; shorter parts match too much.
const minPart = 4

// NewSplitter builds a splitter from the words of texts, folded by a.
func NewSplitter(a *Analyzer, texts ...string) *Splitter {
	s := &Splitter{a: a, tokens: map[string]struct{}{}, stems: map[string]struct{}{}}
	for _, t := range texts {
		for _, tok := range a.Tokens(t) {
			if len(tok) < minPart || a.IsStop(tok) {
				continue
			}
			s.tokens[tok] = struct{}{}
			s.stems[a.Stem(tok)] = struct{}{}
		}
	}
	return s
}

func (s *Splitter) known(part string) bool {
	if len(part) < minPart {
		return false
	}
	if _, ok := s.tokens[part]; ok {
		return true
	}
	_, ok := s.stems[s.a.Stem(part)]
	return ok
}

// Split returns the parts of a folded compound, or nil when it has none: the longest known head
// whose tail is known or itself a compound of known words (complete); failing that, a known head
// or tail of at least partMin bytes on its own (not complete), so that "Bereitschaftsdienst"
// still yields "bereitschaft". A linking "s" or "n" after the head is allowed.
func (s *Splitter) Split(tok string) (parts []string, complete bool) {
	if len(tok) < 2*minPart {
		return nil, false
	}
	if parts := s.split(tok, 3); parts != nil {
		return parts, true
	}
	for i := len(tok) - minPart; i >= partMin; i-- {
		if s.known(tok[:i]) {
			return []string{tok[:i]}, false
		}
	}
	for i := minPart; i <= len(tok)-partMin; i++ {
		if s.known(tok[i:]) {
			return []string{tok[i:]}, false
		}
	}
	return nil, false
}

// partMin is the shortest part kept when the rest of the compound is unknown.
const partMin = 5

func (s *Splitter) split(tok string, depth int) []string {
	if depth == 0 {
		return nil
	}
	for i := len(tok) - minPart; i >= minPart; i-- {
		head := tok[:i]
		if !s.known(head) {
			continue
		}
		for _, skip := range [...]int{0, 1} {
			if skip == 1 && tok[i] != 's' && tok[i] != 'n' {
				continue
			}
			tail := tok[i+skip:]
			if s.known(tail) {
				return []string{head, tail}
			}
			if rest := s.split(tail, depth-1); rest != nil {
				return append([]string{head}, rest...)
			}
		}
	}
	return nil
}
