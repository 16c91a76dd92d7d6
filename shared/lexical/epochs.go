package lexical

import (
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

	mu    sync.Mutex
	cache []*Epoch // most recently used first
	// builds counts the epochs analysed since start (the one given to NewEpochs aside).
	builds atomic.Int64
}

// DefaultEpochs is how many analysed epochs Epochs keeps: today's, yesterday's set for an audit,
// a coming one being prepared, and one more.
const DefaultEpochs = 4

// NewEpochs returns the epochs of corpus (every version on file). ix, when not nil, is the index
// already analysed for the documents of on (a view of corpus, or corpus itself when it holds no
// versions): a prebuilt index serves its own set without being analysed again.
func NewEpochs(corpus, on *knowledge.Corpus, ix *Index, keep int) *Epochs {
	e := &Epochs{corpus: corpus, max: max(keep, 1)}
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

// At returns the epoch of day (an ISO date), analysing it when it is not kept. Lookups of other
// days wait while one is analysed (tens of milliseconds, once per set in force).
func (e *Epochs) At(day string) *Epoch {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.corpus == nil {
		return e.cache[0]
	}
	key := e.corpus.InForceKey(day)
	for i, ep := range e.cache {
		if ep.key == key {
			copy(e.cache[1:i+1], e.cache[:i])
			e.cache[0] = ep
			return ep
		}
	}
	on := e.corpus.On(day)
	ep := &Epoch{Corpus: on, Index: Build(on), key: key}
	e.builds.Add(1)
	if len(e.cache) < e.max {
		e.cache = append(e.cache, nil)
	}
	copy(e.cache[1:], e.cache)
	e.cache[0] = ep
	return ep
}
