package knowledge

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	gohash "hash"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/synonyms"
)

// ErrStale is returned by Restore when the source files are not the ones the documents were
// loaded from.
var ErrStale = errors.New("the corpus files changed since the prebuilt index was built")

// Restore makes the corpus of documents that were loaded and checked before (a prebuilt index
// carries them), without parsing them again: it reads the bytes of the source files, gives each
// document its Raw bytes from procs, and requires the fingerprint of the files of procs and syns
// (nil when there are none) to be want, so that a corpus whose files changed since is never
// restored (ErrStale). docs are every version on file of every language, each language's sorted
// by id, a procedure's versions by effective date (as Corpus.All lists them).
// With raw unset the documents' Raw stays nil: only manifest sync sends the files' bytes, and a
// function that answers questions need not hold the corpus twice. The synonym files are parsed
// on the first call of Synonyms only: a restored corpus is used with the prebuilt index, which
// holds the rules compiled.
func Restore(docs []*Document, procs, syns fs.FS, want string, raw bool) (*Corpus, error) {
	c := newCorpus()
	var bytesOf map[string][]byte
	if raw {
		bytesOf = map[string][]byte{}
	}
	if err := readSources(procs, "procedures", ".md", c.files, bytesOf); err != nil {
		return nil, err
	}
	if syns != nil {
		if err := readSources(syns, SynonymsDir, ".txt", c.files, nil); err != nil {
			return nil, err
		}
	}
	if got := c.Fingerprint(); got != want {
		return nil, fmt.Errorf("%w (files %s, index built from %s)", ErrStale, short(got), short(want))
	}
	for _, d := range docs {
		if sum, ok := c.files[d.Path]; !ok || sum != d.SHA256 {
			return nil, fmt.Errorf("%w: %s", ErrStale, d.Path)
		}
		if raw {
			d.Raw = bytesOf[d.Path]
		}
		c.add(d)
	}
	c.lazySynonyms = parseLater(syns)
	return c, nil
}

// parseLater parses the synonym files of syns (nil for none) on the first call: the synonyms and
// the uncovered topics. The files are the ones a prebuilt index was built from (the fingerprint
// matched), which parsed without error then.
func parseLater(syns fs.FS) func() (map[string]*synonyms.Set, map[string]*synonyms.Set) {
	return sync.OnceValues(func() (map[string]*synonyms.Set, map[string]*synonyms.Set) {
		parsed := newCorpus()
		if syns != nil {
			parsed.loadSynonyms(syns, SynonymsDir)
		}
		return parsed.synonyms, parsed.uncovered
	})
}

// readSources hashes every <language>/*<ext> file of fsys into files, keyed by prefix/<path>,
// and keeps the bytes in raw when raw is not nil.
func readSources(fsys fs.FS, prefix, ext string, files map[string]string, raw map[string][]byte) error {
	var st streamHash
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return fmt.Errorf("read %s: %w", prefix, err)
	}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == SynonymsDir {
			continue
		}
		list, err := fs.ReadDir(fsys, e.Name())
		if err != nil {
			return fmt.Errorf("read %s/%s: %w", prefix, e.Name(), err)
		}
		for _, f := range list {
			if f.IsDir() || !strings.HasSuffix(f.Name(), ext) {
				continue
			}
			name := path.Join(e.Name(), f.Name())
			if raw == nil {
				// Only the hash is kept: the file streams through one buffer instead of being
				// read whole, which at 10,000 procedures would leave 79 MB of garbage behind.
				sum, err := st.file(fsys, name)
				if err != nil {
					return fmt.Errorf("read %s/%s: %w", prefix, name, err)
				}
				files[prefix+"/"+name] = sum
				continue
			}
			b, err := fs.ReadFile(fsys, name)
			if err != nil {
				return fmt.Errorf("read %s/%s: %w", prefix, name, err)
			}
			files[prefix+"/"+name] = hash(b)
			raw[prefix+"/"+name] = b
		}
	}
	return nil
}

// streamHash hashes files as hash does, through one reused buffer.
type streamHash struct {
	h   gohash.Hash
	buf []byte
}

func (st *streamHash) file(fsys fs.FS, name string) (string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if st.h == nil {
		st.h, st.buf = sha256.New(), make([]byte, 32<<10)
	}
	st.h.Reset()
	// Read by hand: io.CopyBuffer would not use the buffer, as *os.File has WriteTo.
	for {
		n, err := f.Read(st.buf)
		st.h.Write(st.buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(st.h.Sum(sum[:0])), nil
}

func short(h string) string { return h[:min(len(h), 12)] }

// EmbeddedSources returns the embedded procedures and synonym files, as Restore reads them.
func EmbeddedSources() (procs, syns fs.FS, err error) {
	if procs, err = fs.Sub(embedded, "procedures"); err != nil {
		return nil, nil, err
	}
	if syns, err = fs.Sub(embedded, SynonymsDir); err != nil {
		return nil, nil, err
	}
	return procs, syns, nil
}
