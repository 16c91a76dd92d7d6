package lexical

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"unsafe"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/synonyms"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// The prebuilt form of an index is what a function loads at a cold start instead of parsing the
// procedures and analysing them: the checked documents, and per language the interned
// vocabulary, the flat postings and front-matter arrays, the compound splitter's vocabulary and
// the compiled synonym rules. It holds no pointers: integers as little-endian arrays, strings
// as length-prefixed bytes. It names the fingerprint of the source files it was built from
// (knowledge.Corpus.Fingerprint), and loading it checks the files against it, so a stale
// prebuilt index is never used. The statistics that follow from the arrays (idf, categories per
// term) are computed at load. Encode is deterministic: the same corpus gives the same bytes.

// PrebuiltFile is the prebuilt index's file name in KNOWLEDGE_DIR (cmd/index-build writes it).
const PrebuiltFile = "index.bin"

// prebuiltMagic starts every prebuilt index; its last byte is the format version, which changes
// with anything the bytes mean, so that an index of another version is rebuilt instead of read
// wrongly. Every integer array is aligned to 4 bytes from the start of the file, so that a static
// load can use the arrays in place.
const prebuiltMagic = "MOKIDX\x00\x06"

// ErrPrebuilt is returned for bytes that are not a prebuilt index of this format.
var ErrPrebuilt = errors.New("not a prebuilt index of this version")

// Encode returns the prebuilt form of ix, built from c: the index of every version on file
// (BuildAll), whose documents are c.All()'s.
func Encode(ix *Index, c *knowledge.Corpus) []byte {
	c = c.All()
	var e encoder
	e.buf.WriteString(prebuiltMagic)
	e.str(c.Fingerprint())
	var docs encoder
	n := 0
	for _, lang := range knowledge.Languages {
		n += len(c.Documents(lang))
	}
	docs.uvarint(n)
	for _, lang := range knowledge.Languages {
		for _, d := range c.Documents(lang) {
			docs.document(d)
		}
	}
	e.section(&docs)
	e.uvarint(len(knowledge.Languages))
	for _, lang := range knowledge.Languages {
		var le encoder
		ix.Lang(lang).encode(&le)
		e.str(lang)
		e.section(&le)
	}
	return e.buf.Bytes()
}

// LoadOptions say how Load restores a prebuilt index; the zero value checks everything and
// copies what the index keeps out of the bytes.
type LoadOptions struct {
	// Procs and Syns are the corpus's source files (the procedures and the synonym files; Syns
	// may be nil): they must be the files the bytes were built from (knowledge.ErrStale
	// otherwise).
	Procs, Syns fs.FS
	// Raw keeps the documents' Raw bytes (see knowledge.Restore): only manifest sync sends them,
	// and a function that answers questions need not hold the corpus twice.
	Raw bool
	// Static is for bytes that never change and stay for the life of the process, such as the
	// embedded prebuilt index (knowledge.EmbeddedIndex) or a mapped file: the index's and the
	// documents' strings refer into the bytes instead of being copied out of them, which saves
	// copying the corpus's text at every cold start.
	Static bool
	// Compiled is for an index compiled into the binary beside its source files; it is static.
	// The files are hashed and compared with the index's fingerprint as always (a go build takes
	// the files as they are on disk, the index as `go generate ./knowledge` last wrote it, and
	// the two need not agree), but the arrays' offsets are not checked:
	// TestPrebuiltIndexRoundTrips loads the embedded index's bytes with every check when the
	// binary is built, and an index whose fingerprint matches is those bytes.
	Compiled bool
	// Embedded is Compiled with the embedded sources (knowledge.EmbeddedSources) as Procs and
	// Syns, for the embedded prebuilt index (knowledge.EmbeddedIndex). The load fails with
	// knowledge.ErrStale when a procedure or synonym file was edited after
	// `go generate ./knowledge` last wrote the index.
	Embedded bool
	// CorpusOnly restores the corpus alone (the index is nil), for the functions that read the
	// procedures but never analyse a question (status, manifest sync).
	CorpusOnly bool
}

// Load restores an index and its corpus from their prebuilt form b, as o says.
func Load(b []byte, o LoadOptions) (*Index, *knowledge.Corpus, error) {
	if o.Embedded {
		procs, syns, err := knowledge.EmbeddedSources()
		if err != nil {
			return nil, nil, err
		}
		o.Procs, o.Syns, o.Compiled = procs, syns, true
	}
	static := o.Static || o.Compiled
	if o.CorpusOnly {
		_, c, err := loadCorpus(b, o.Procs, o.Syns, o.Raw, static)
		return nil, c, err
	}
	return load(b, o.Procs, o.Syns, o.Raw, static, o.Compiled)
}

func load(b []byte, procs, syns fs.FS, raw, static, compiled bool) (*Index, *knowledge.Corpus, error) {
	d, c, err := loadCorpus(b, procs, syns, raw, static)
	if err != nil {
		return nil, nil, err
	}
	// The index's documents are every version on file, each language's in the order Encode
	// wrote them (knowledge.Corpus.All).
	all := c.All()
	ix := &Index{langs: map[string]*Lang{}}
	langs := d.count(1)
	for range langs {
		lang := d.str()
		body := d.sub()
		if d.err != nil {
			break
		}
		if !slices.Contains(knowledge.Languages, lang) || ix.langs[lang] != nil {
			return nil, nil, fmt.Errorf("%w: language %q", ErrPrebuilt, lang)
		}
		// A compiled index's arrays were checked when the binary was built (see LoadOptions.Compiled).
		// The statistics of an index with versions on file are never read: every day is served
		// from a view of it (Index.Project), which computes its own; skipping them saves a pass
		// over the arrays and their heap at every cold start.
		l, err := decodeLang(body, lang, all.Documents(lang), !compiled, !c.Versioned())
		if err != nil {
			return nil, nil, fmt.Errorf("prebuilt index, %s: %w", lang, err)
		}
		l.uncovered = uncoveredOf(c, lang)
		ix.langs[lang] = l
	}
	if err := d.done(); err != nil {
		return nil, nil, err
	}
	for _, lang := range knowledge.Languages {
		if ix.langs[lang] == nil {
			return nil, nil, fmt.Errorf("%w: no %s index", ErrPrebuilt, lang)
		}
	}
	return ix, c, nil
}

// loadCorpus decodes the documents and restores their corpus (knowledge.Restore), which checks
// them against their source files.
func loadCorpus(b []byte, procs, syns fs.FS, raw, static bool) (*decoder, *knowledge.Corpus, error) {
	if !bytes.HasPrefix(b, []byte(prebuiltMagic)) {
		return nil, nil, ErrPrebuilt
	}
	d := newDecoder(b[len(prebuiltMagic):])
	d.static = static
	want := d.str()
	docsBody := d.sub()
	if d.err != nil {
		return nil, nil, d.err
	}
	n := docsBody.count(1)
	docs := make([]*knowledge.Document, 0, n)
	for range n {
		docs = append(docs, docsBody.document())
	}
	if err := docsBody.done(); err != nil {
		return nil, nil, err
	}
	c, err := knowledge.Restore(docs, procs, syns, want, raw)
	if err != nil {
		return nil, nil, err
	}
	return d, c, nil
}

// encode writes the language's index: its vocabulary, then each part with its own encoder, in
// the order of version 6 of the format (the postings and passages; the front matter's terms;
// the phrases; the front matter's inverted index; the passages' average length; the analysis;
// the sentences), so that the bytes stay those of an index.bin of that version.
func (l *Lang) encode(e *encoder) {
	e.strs(l.terms.words)
	l.post.encode(e, l.Passages)
	l.front.encodeTerms(e)
	l.phr.encode(e)
	l.front.encodeDocs(e)
	l.post.encodeAvgLen(e)
	encodeAnalysis(e, l.Text, l.Analyzer)
	l.sent.encode(e)
}

// encodeAnalysis writes the analysis of the language: the compound splitter's vocabulary (text's)
// and the question analysis's synonym rules, compiled (question's).
func encodeAnalysis(e *encoder, text, question *textproc.Analyzer) {
	if s := text.Splitter(); s != nil {
		tokens, stems := s.Words()
		e.uvarint(1)
		e.strs(tokens)
		e.strs(stems)
	} else {
		e.uvarint(0)
	}
	m := question.SynonymMatcher().Flat()
	e.strs(m.Keys)
	for _, xs := range [][]uint32{m.AltStart, m.AltFrom, m.AltTo, m.AltTerm, m.AltFile, m.AltLine, m.TokenIDs, m.Slots} {
		e.u32s(xs)
	}
	e.strs(m.RuleTerms)
	e.strs(m.Files)
	e.strs(m.Vocabulary)
	e.uvarint(m.TermCount)
}

// decodeAnalysis reads what encodeAnalysis wrote: the index's analysis of lang and the flat
// synonym rules of the question analysis.
func decodeAnalysis(d *decoder, lang string) (*textproc.Analyzer, synonyms.Flat) {
	base := textproc.New(lang)
	text := base
	if d.uvarint() == 1 {
		text = base.WithSplitter(textproc.RestoreSplitter(base, d.strs(), d.strs()))
	}
	m := synonyms.Flat{Keys: d.strs(), AltStart: d.u32s(), AltFrom: d.u32s(), AltTo: d.u32s(), AltTerm: d.u32s(),
		AltFile: d.u32s(), AltLine: d.u32s(), TokenIDs: d.u32s(), Slots: d.u32s(), RuleTerms: d.strs(), Files: d.strs(),
		Vocabulary: d.strs(), TermCount: d.uvarint()}
	return text, m
}

// decodeLang reads what encode wrote, each part with its own decoder; verify checks every part
// (check), stats computes the statistics now rather than when a day first needs them.
func decodeLang(d *decoder, lang string, docs []*knowledge.Document, verify, stats bool) (*Lang, error) {
	l := &Lang{Language: lang, Docs: docs, shared: new(keptValues)}
	newScratch(l)
	l.terms = newTermTable(d.strs())
	passages, perr := l.post.decode(d, docs)
	l.front.decodeTerms(d)
	l.phr.decode(d)
	l.front.decodeDocs(d)
	l.post.decodeAvgLen(d)
	text, m := decodeAnalysis(d, lang)
	l.sent.decode(d)
	if err := d.done(); err != nil {
		return nil, err
	}
	var matcher *synonyms.Matcher
	if verify {
		var err error
		if matcher, err = synonyms.FromFlat(m); err != nil {
			return nil, err
		}
	} else {
		matcher = synonyms.FromCheckedFlat(m)
	}
	l.Text, l.Analyzer = text, text.WithSynonyms(matcher)
	if perr != nil {
		return nil, perr
	}
	l.Passages = passages
	if verify {
		if err := l.check(); err != nil {
			return nil, err
		}
	}
	l.docStatistics()
	if stats {
		l.statistics()
	} else {
		l.lazyStats = true
	}
	return l, nil
}

// check verifies that every offset and id of a decoded index is within its array, so that a
// damaged prebuilt index fails to load instead of failing a lookup: each part checks its own.
func (l *Lang) check() error {
	V, P := len(l.terms.words), len(l.Passages)
	if !slices.IsSorted(l.terms.words) {
		return badPrebuilt("vocabulary order")
	}
	for _, err := range []func() error{
		func() error { return l.post.check(V, l.Passages, l.Docs) },
		func() error { return l.front.check(V, len(l.Docs)) },
		func() error { return l.phr.check(V, l.Docs) },
		func() error { return l.sent.check(V, P) },
	} {
		if err := err(); err != nil {
			return err
		}
	}
	return nil
}

func badPrebuilt(what string) error { return fmt.Errorf("%w: %s out of range", ErrPrebuilt, what) }

// offsetsTo reports whether o holds n+1 offsets, ascending from 0 to target.
func offsetsTo(o []uint32, n, target int) bool {
	if n < 0 || len(o) != n+1 || o[0] != 0 || int(o[n]) != target {
		return false
	}
	for i := 1; i < len(o); i++ {
		if o[i] < o[i-1] {
			return false
		}
	}
	return true
}

// idsBelow reports whether every id is below n.
func idsBelow[T uint32 | Term](ids []T, n int) bool {
	for _, x := range ids {
		if int(x) >= n {
			return false
		}
	}
	return true
}

// encoder writes the prebuilt form.
type encoder struct{ buf bytes.Buffer }

func (e *encoder) uvarint(n int) { e.buf.Write(binary.AppendUvarint(nil, uint64(n))) }
func (e *encoder) u64(x uint64) {
	e.buf.Write(binary.LittleEndian.AppendUint64(nil, x))
}
func (e *encoder) str(s string) { e.uvarint(len(s)); e.buf.WriteString(s) }

// strs writes a list of strings as their count, their lengths, then their bytes back to back,
// so that reading the list copies its text once.
func (e *encoder) strs(ss []string) {
	e.uvarint(len(ss))
	for _, s := range ss {
		e.uvarint(len(s))
	}
	for _, s := range ss {
		e.buf.WriteString(s)
	}
}

func (e *encoder) u32s(xs []uint32) { putIntegers(e, xs, 4) }
func (e *encoder) terms(ts []Term)  { putIntegers(e, ts, 4) }
func (e *encoder) u16s(xs []uint16) { putIntegers(e, xs, 2) }

// putIntegers writes a list of integers as its count, the padding that aligns what follows (see
// align), and each in size bytes, little-endian.
func putIntegers[T ~uint16 | ~uint32](e *encoder, xs []T, size int) {
	e.uvarint(len(xs))
	e.align()
	var b [4]byte
	for _, x := range xs {
		binary.LittleEndian.PutUint32(b[:], uint32(x))
		e.buf.Write(b[:size])
	}
}

// section writes a length-prefixed body, so that a reader can skip it, aligned (see align): the
// body's own alignment, from its start, is then its alignment in the file.
func (e *encoder) section(body *encoder) {
	e.uvarint(body.buf.Len())
	e.align()
	e.buf.Write(body.buf.Bytes())
}

// align writes how many zero bytes follow (0 to 3), then those bytes, so that what comes next
// starts at a multiple of 4 bytes from the start of the buffer.
func (e *encoder) align() {
	pad := (4 - (e.buf.Len()+1)%4) % 4
	e.buf.WriteByte(byte(pad))
	e.buf.Write(make([]byte, pad))
}

func (e *encoder) document(d *knowledge.Document) {
	for _, s := range []string{d.ID, d.Title, d.Version, d.EffectiveDate, d.Language, d.Category, d.Owner, d.Path, d.SHA256} {
		e.str(s)
	}
	e.strs(d.Keywords)
	e.strs(d.Entities)
	e.uvarint(len(d.Sections))
	for _, s := range d.Sections {
		e.uvarint(s.Number)
		e.str(s.Heading)
		e.str(s.Anchor)
		e.str(s.Content)
	}
}

// decoder reads the prebuilt form. Everything it returns is a copy (a string, or a list's
// strings together, of its own): the bytes may be a file mapping that is released after the
// load, and what the index keeps must never hold on to the bytes around it. The first error sticks:
// every later read returns zero values, and done reports it.
type decoder struct {
	b   []byte
	off int
	err error
	// static: b never changes and outlives what is decoded, so strings refer into it (see
	// LoadOptions.Static) instead of copying.
	static bool
}

func newDecoder(b []byte) *decoder { return &decoder{b: b} }

// littleEndian reports whether integers are stored in memory as the prebuilt index stores them.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: truncated or damaged at byte %d (%s)", ErrPrebuilt, d.off, what)
	}
	d.off = len(d.b)
}

func (d *decoder) uvarint() int {
	if d.err != nil {
		return 0
	}
	x, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 || x > math.MaxInt32 {
		d.fail("length")
		return 0
	}
	d.off += n
	return int(x)
}

// count reads a count of items of at least minBytes each, bounded by the bytes left, so that a
// damaged count cannot make the reader allocate more than the input could hold.
func (d *decoder) count(minBytes int) int {
	n := d.uvarint()
	if n*minBytes > len(d.b)-d.off {
		d.fail("count")
		return 0
	}
	return n
}

func (d *decoder) take(n int, what string) (int, bool) {
	if d.err != nil || n > len(d.b)-d.off {
		d.fail(what)
		return 0, false
	}
	at := d.off
	d.off += n
	return at, true
}

func (d *decoder) str() string {
	n := d.uvarint()
	at, ok := d.take(n, "string")
	if !ok {
		return ""
	}
	return d.text(at, n)
}

// text returns the n bytes at at as a string: a copy, or for a static decoder the bytes
// themselves.
func (d *decoder) text(at, n int) string {
	if d.static {
		if n == 0 {
			return ""
		}
		return unsafe.String(&d.b[at], n)
	}
	return string(d.b[at : at+n])
}

// strs reads a list of strings (see encoder.strs): one copy of the list's text, which the
// strings share.
func (d *decoder) strs() []string {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	// The lengths are read twice, to find where the text starts and then to cut it, instead of
	// being kept in a list of their own.
	lensAt, total := d.off, 0
	for range n {
		total += d.uvarint()
		if total > len(d.b)-d.off {
			d.fail("strings")
			return nil
		}
	}
	textAt := d.off
	at, ok := d.take(total, "strings")
	if !ok {
		return nil
	}
	text := d.text(at, total)
	out := make([]string, n)
	lens := decoder{b: d.b[lensAt:textAt]}
	for i := range out {
		l := lens.uvarint()
		out[i], text = text[:l], text[l:]
	}
	return out
}

func (d *decoder) u64() uint64 {
	at, ok := d.take(8, "float")
	if !ok {
		return 0
	}
	return binary.LittleEndian.Uint64(d.b[at:])
}

func (d *decoder) u32s() []uint32 { return integers[uint32](d, 4) }
func (d *decoder) terms() []Term  { return integers[Term](d, 4) }
func (d *decoder) u16s() []uint16 { return integers[uint16](d, 2) }

// integers reads a list of integers written by putIntegers with the same size.
func integers[T ~uint16 | ~uint32](d *decoder, size int) []T {
	n := d.count(size)
	d.align()
	at, ok := d.take(size*n, "integers")
	if !ok {
		return nil
	}
	// A static decoder's aligned little-endian integers are used where they are.
	if d.static && n > 0 && littleEndian && uintptr(unsafe.Pointer(&d.b[at]))%uintptr(size) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(&d.b[at])), n)
	}
	out := make([]T, n)
	for i := range out {
		b := d.b[at+size*i:]
		if size == 2 {
			out[i] = T(binary.LittleEndian.Uint16(b))
		} else {
			out[i] = T(binary.LittleEndian.Uint32(b))
		}
	}
	return out
}

// align skips the padding that encoder.align wrote.
func (d *decoder) align() {
	if d.err != nil {
		return
	}
	if d.off >= len(d.b) || d.b[d.off] > 3 {
		d.fail("padding")
		return
	}
	pad := int(d.b[d.off])
	d.off++
	d.take(pad, "padding")
}

// sub reads a length-prefixed section as a decoder of its own.
func (d *decoder) sub() *decoder {
	n := d.uvarint()
	d.align()
	at, ok := d.take(n, "section")
	if !ok {
		return &decoder{err: d.err}
	}
	return &decoder{b: d.b[at : at+n], static: d.static}
}

func (d *decoder) document() *knowledge.Document {
	doc := &knowledge.Document{ID: d.str(), Title: d.str(), Version: d.str(), EffectiveDate: d.str(), Language: d.str(),
		Category: d.str(), Owner: d.str(), Path: d.str(), SHA256: d.str()}
	doc.Keywords = d.strs()
	doc.Entities = d.strs()
	n := d.count(4)
	doc.Sections = make([]knowledge.Section, 0, n)
	for range n {
		doc.Sections = append(doc.Sections, knowledge.Section{Number: d.uvarint(), Heading: d.str(), Anchor: d.str(), Content: d.str()})
	}
	return doc
}

// done reports the first error, or trailing bytes.
func (d *decoder) done() error {
	if d.err != nil {
		return d.err
	}
	if d.off != len(d.b) {
		return fmt.Errorf("%w: %d trailing bytes", ErrPrebuilt, len(d.b)-d.off)
	}
	return nil
}
