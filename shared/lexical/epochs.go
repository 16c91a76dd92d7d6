package lexical

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

// Epoch is the corpus as it stands on a day, analysed: the procedure versions in force then
// (Corpus, a view made by knowledge.Corpus.On) and their index. BM25 and L0 statistics are those
// of the versions in force: a version written ahead changes no ranking before its day.
type Epoch struct {
	Corpus *knowledge.Corpus
	Index  *Index
	key    string
}

// Epochs holds the analysed index of each set of versions in force that has been served. The
// set changes only on effective dates, so a day maps onto few epochs; each is analysed on its
// first lookup and kept, the keep most recently used at most (see NewEpochs).
type Epochs struct {
	corpus *knowledge.Corpus // every version
	max    int

	// dates are the corpus's effective dates, in order; keys maps the last of them on or before
	// a day ("" before the first) onto that day's set in force (Corpus.InForceKey), so that a
	// lookup finds its set by a binary search instead of listing the corpus's versions.
	dates []string
	keys  map[string]string

	mu       sync.Mutex
	cache    []*Epoch // most recently used first
	building map[string]*epochBuild
	// analyse admits one analysis at a time, so that requests for many uncached days cost one
	// analysis's CPU and memory at a time, never one each at once.
	analyse sync.Mutex
	// builds counts the epochs analysed since start (the one given to NewEpochs aside).
	builds atomic.Int64
}

// DefaultEpochs is how many analysed epochs Epochs keeps: today's, the sets an audit or a
// coming change asks for, each about 4 MB on the embedded corpus.
const DefaultEpochs = 8

// NewEpochs returns the epochs of corpus (every version on file). ix, when not nil, is the index
// already analysed for the documents of on (a view of corpus, or corpus itself when it holds no
// versions): a prebuilt index serves its own set without being analysed again.
func NewEpochs(corpus, on *knowledge.Corpus, ix *Index, keep int) *Epochs {
	e := &Epochs{corpus: corpus, max: max(keep, 1), keys: map[string]string{}}
	if corpus != nil {
		e.dates = corpus.EffectiveDates()
	}
	if ix != nil && on != nil {
		e.cache = []*Epoch{{Corpus: on, Index: ix, key: on.Key()}}
	}
	return e
}

// Single returns the epochs of an index whose corpus is not known (tests, tools): every day is
// served from ix, and no version is known.
func Single(ix *Index) *Epochs {
	return &Epochs{max: 1, cache: []*Epoch{{Index: ix}}}
}

// Corpus is the corpus with every version, nil for Single.
func (e *Epochs) Corpus() *knowledge.Corpus { return e.corpus }

// Builds counts the epochs analysed since start.
func (e *Epochs) Builds() int64 { return e.builds.Load() }

// epochBuild is an analysis under way; lookups of its day wait for it (done) instead of starting
// their own.
type epochBuild struct {
	done chan struct{}
	ep   *Epoch
}

// At returns the epoch of day (an ISO date), analysing it when it is not kept (tens of
// milliseconds on the embedded corpus, once per set in force). Only lookups of a day being
// analysed wait for it; a kept epoch is returned at once while another is analysed.
func (e *Epochs) At(day string) *Epoch {
	if e.corpus == nil {
		return e.cache[0]
	}
	e.mu.Lock()
	key := e.keyOf(day)
	for i, ep := range e.cache {
		if ep.key == key {
			copy(e.cache[1:i+1], e.cache[:i])
			e.cache[0] = ep
			e.mu.Unlock()
			return ep
		}
	}
	if b := e.building[key]; b != nil {
		e.mu.Unlock()
		<-b.done
		return b.ep
	}
	b := &epochBuild{done: make(chan struct{})}
	if e.building == nil {
		e.building = map[string]*epochBuild{}
	}
	e.building[key] = b
	e.mu.Unlock()

	e.analyse.Lock()
	on := e.corpus.On(day)
	b.ep = &Epoch{Corpus: on, Index: Build(on), key: key}
	e.analyse.Unlock()
	e.builds.Add(1)

	e.mu.Lock()
	delete(e.building, key)
	if len(e.cache) < e.max {
		e.cache = append(e.cache, nil)
	}
	copy(e.cache[1:], e.cache)
	e.cache[0] = b.ep
	e.mu.Unlock()
	close(b.done)
	return b.ep
}

// keyOf is the key of day's set in force, made once per effective date (under mu).
func (e *Epochs) keyOf(day string) string {
	i, found := slices.BinarySearch(e.dates, day)
	since := ""
	switch {
	case found:
		since = day
	case i > 0:
		since = e.dates[i-1]
	}
	key, ok := e.keys[since]
	if !ok {
		key = e.corpus.InForceKey(day)
		e.keys[since] = key
	}
	return key
}
