package lexical

import (
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/singleflight"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

// Epoch is the corpus as it stands on a day, analysed: the procedure versions in force then
// (Corpus, a view made by knowledge.Corpus.On) and their index. BM25 and L0 statistics are those
// of the versions in force: a version written ahead changes no ranking before its day.
type Epoch struct {
	Corpus *knowledge.Corpus
	Index  *Index
	// Since is the effective date from which the set is in force ("" before the corpus's first
	// one); the set lasts until the next effective date.
	Since string
	// bytes is about how much heap the epoch holds of its own (0 for the base index itself).
	bytes int64
}

// Epochs holds the analysed index of each set of versions in force that has been served.
//
// The cache: its bound is keep epochs (NewEpochs) and DefaultEpochBytes of their own heap
// (the most recently used epoch is kept whatever its size), most recently used first; its key is the
// effective date from which a set is in force (the last of the corpus's effective dates on or
// before the day asked), so a caller cycling through days reaches at most one entry per
// effective date on file, never one per day; asking for a set not kept evicts the least
// recently used one, and nothing else refers to an evicted epoch (what callers keep, they keep
// with the index of every version, see Lang.KeptShared), so its memory is freed. Today's set
// (Today) is never evicted for another: an audit cycling as_of over sets larger than the byte
// bound makes room among the others, and lookups without a date keep being served from the set
// kept for them. A set not kept is made once however many lookups ask for it at once
// (singleflight), and one at a time.
type Epochs struct {
	corpus   *knowledge.Corpus // every version
	max      int
	maxBytes int64

	// dates are the corpus's effective dates, in order: a day's set is found by a binary search
	// instead of listing the corpus's versions.
	dates []string

	mu    sync.Mutex
	cache []*Epoch // most recently used first, at most max (today's set aside)
	// today is the key of today's set (Today), which is never evicted; pinned tells that one
	// was named ("" is a key: the set before the first effective date).
	today  string
	pinned bool
	// lastBytes is the heap of the last epoch made, the room made before the next (0 before it).
	lastBytes int64
	// flight shares the making of one set among the lookups that ask for it at once.
	flight singleflight.Group
	// making admits one set at a time, so that requests for many uncached sets cost one set's
	// CPU and memory at a time, never one each at once.
	making sync.Mutex
	// builds counts the epochs made since start (the one given to NewEpochs aside).
	builds atomic.Int64
	// base, when set, is the index of every version on file: an epoch is its view onto the
	// day's versions in force (Index.Project) instead of an analysis of them.
	base *Index
}

// DefaultEpochs is how many epochs Epochs keeps at most: today's, the sets an audit or a coming
// change asks for. A view holds only its dead marks, its length normalisation and its term
// statistics (about 0.06 MB on the embedded corpus, 5 MB at 10,000 procedures, counting every
// chunk of statistics; every array, text and scratch pool is the base's), so that a corpus of the
// embedded size keeps every set an audit cycles through, and one of 10,000 procedures about a
// dozen besides today's (DefaultEpochBytes).
const DefaultEpochs = 32

// DefaultEpochBytes bounds the heap the epochs kept hold of their own (Epochs evicts the least
// recently used beyond it; the most recently used and today's set are always kept).
const DefaultEpochBytes = 64 << 20

// NewEpochs returns the epochs of corpus (every version on file). ix, when not nil, is the index
// already analysed for the documents of on (a view of corpus, or corpus itself): it serves its
// own set without being analysed again.
func NewEpochs(corpus, on *knowledge.Corpus, ix *Index, keep int) *Epochs {
	e := &Epochs{corpus: corpus, max: max(keep, 1), maxBytes: DefaultEpochBytes}
	if corpus == nil {
		return e
	}
	e.dates = corpus.EffectiveDates()
	if ix == nil || on == nil {
		return e
	}
	switch since := e.since(on.Day()); {
	case on.Day() != "":
		e.cache = []*Epoch{{Corpus: on, Index: ix, Since: since}}
	case len(e.dates) > 0 && on.Key() == corpus.InForceKey(e.dates[len(e.dates)-1]):
		// The corpus as loaded (its <id>.md files) is the set in force since its last
		// effective date, as for a corpus without versions.
		last := e.dates[len(e.dates)-1]
		e.cache = []*Epoch{{Corpus: corpus.On(last), Index: ix, Since: last}}
	}
	return e
}

// WithByteBound replaces DefaultEpochBytes (a function bounds them by its memory, see wire).
func (e *Epochs) WithByteBound(n int64) *Epochs {
	e.maxBytes = n
	return e
}

// ByteBound is the heap the epochs kept may hold of their own (see WithByteBound).
func (e *Epochs) ByteBound() int64 { return e.maxBytes }

// Bytes is about how much heap the epochs kept hold of their own: at most the byte bound, or the
// most recently used epoch's and today's when those alone are larger.
func (e *Epochs) Bytes() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	var n int64
	for _, ep := range e.cache {
		n += ep.bytes
	}
	return n
}

// WithBase makes every epoch by projecting base, the index of every version on file (BuildAll,
// or its prebuilt form), onto the day's versions in force instead of analysing them: no text is
// analysed after the cold start, and an epoch not kept costs a pass over base's arrays.
func (e *Epochs) WithBase(base *Index) *Epochs {
	e.base = base
	return e
}

// Single returns the epochs of an index whose corpus is not known (tests, tools): every day is
// served from ix, and no version is known.
func Single(ix *Index) *Epochs {
	return &Epochs{max: 1, cache: []*Epoch{{Index: ix}}}
}

// Corpus is the corpus with every version, nil for Single.
func (e *Epochs) Corpus() *knowledge.Corpus { return e.corpus }

// Builds counts the epochs made since start.
func (e *Epochs) Builds() int64 { return e.builds.Load() }

// Kept is how many epochs are kept now: never more than the bound given to NewEpochs (two when
// it is 1 and today's set is not the most recently used).
func (e *Epochs) Kept() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.cache)
}

// At returns the epoch of day (an ISO date), making it when it is not kept. Only lookups of a
// set being made wait for it; a kept epoch is returned at once while another is made.
func (e *Epochs) At(day string) *Epoch { return e.at(day, false) }

// Today is At for the day a lookup without a date answers from: its set is kept whatever other
// sets are asked for (the set kept as today's before it, if another, becomes one like the
// others). An audit cycling as_of then never makes the lookups of today wait for their set
// again, at any corpus size: the epochs kept hold today's set and the bounds' worth of others.
func (e *Epochs) Today(day string) *Epoch { return e.at(day, true) }

// at is At, keeping the set as today's when today is set.
func (e *Epochs) at(day string, today bool) *Epoch {
	if e.corpus == nil {
		return e.cache[0]
	}
	since := e.since(day)
	if ep := e.kept(since, today); ep != nil {
		return ep
	}
	v, _, _ := e.flight.Do(since, func() (any, error) {
		if ep := e.kept(since, today); ep != nil { // made while this call waited to start
			return ep, nil
		}
		e.making.Lock()
		e.mu.Lock()
		e.trim(e.lastBytes) // room for the set made, so that at most one more is held meanwhile
		e.mu.Unlock()
		ep := e.make(since)
		e.making.Unlock()
		e.builds.Add(1)
		e.mu.Lock()
		e.lastBytes = ep.bytes
		e.cache = append(e.cache, nil)
		copy(e.cache[1:], e.cache)
		e.cache[0] = ep
		if today {
			e.today, e.pinned = since, true
		}
		e.trim(0)
		e.mu.Unlock()
		return ep, nil
	})
	return v.(*Epoch)
}

// trim evicts, least recently used first, the epochs beyond the bounds with room left for one
// more set of coming bytes: the most recently used (when coming is 0) and today's set are kept
// whatever their size, and count towards the bounds. Called with mu held.
func (e *Epochs) trim(coming int64) {
	must := func(i int, ep *Epoch) bool { return e.pinned && ep.Since == e.today || i == 0 && coming == 0 }
	count, total := 0, coming
	if coming > 0 {
		count = 1
	}
	for i, ep := range e.cache {
		if must(i, ep) {
			count, total = count+1, total+ep.bytes
		}
	}
	kept, full := e.cache[:0], false
	for i, ep := range e.cache {
		if !must(i, ep) {
			full = full || count >= e.max || total+ep.bytes > e.maxBytes
			if full {
				continue
			}
			count, total = count+1, total+ep.bytes
		}
		kept = append(kept, ep)
	}
	clear(e.cache[len(kept):])
	e.cache = kept
}

// kept returns the kept epoch of the set in force since, moved to the front, and keeps it as
// today's when today is set; nil when it is not kept.
func (e *Epochs) kept(since string, today bool) *Epoch {
	e.mu.Lock()
	defer e.mu.Unlock()
	if today {
		e.today, e.pinned = since, true
	}
	for i, ep := range e.cache {
		if ep.Since == since {
			copy(e.cache[1:i+1], e.cache[:i])
			e.cache[0] = ep
			return ep
		}
	}
	return nil
}

// make projects (see WithBase) or analyses the set in force since an effective date.
func (e *Epochs) make(since string) *Epoch {
	day := since
	if day == "" {
		day = "0000-01-01"
	}
	on := e.corpus.On(day)
	if e.base != nil {
		if ix, ok := e.base.Project(on); ok {
			ep := &Epoch{Corpus: on, Index: ix, Since: since}
			if ix != e.base {
				ep.bytes = ix.footprint()
			}
			return ep
		}
	}
	ix := Build(on)
	return &Epoch{Corpus: on, Index: ix, Since: since, bytes: ix.footprint()}
}

// since is the last of the corpus's effective dates on or before day, "" when there is none: the
// key of day's set in force, which changes only on effective dates.
func (e *Epochs) since(day string) string {
	i, found := slices.BinarySearch(e.dates, day)
	switch {
	case found:
		return day
	case i > 0:
		return e.dates[i-1]
	}
	return ""
}
