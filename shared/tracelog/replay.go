// Package tracelog reads traces that could not be stored from the functions' logs (log lines, or a
// CloudWatch Logs Insights export as CSV or JSON) and puts them into the table, once each.
//
// The input is read line by line, and each line is read by what it holds, never by what an
// earlier line held: a log line, possibly after a timestamp; a row of a CSV export; a line of a
// JSON export (an array, a "@message" or "value" member, a GetQueryResults document on one line).
// So a first line cut short, a line too long to read or a damaged one costs only itself: it is
// counted unreadable with its line number, and every other line is still read.
package tracelog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// Putter stores a trace unless its invocation id is stored already, and reads a stored one back
// to compare it with the logged copy; store.Dynamo and store.Memory implement it.
type Putter interface {
	PutTraceIfAbsent(ctx context.Context, t lookup.Trace) (stored bool, err error)
	GetTrace(ctx context.Context, invocationID string) (lookup.Trace, error)
}

// Counts is the outcome of a replay.
type Counts struct {
	// Stored traces were put by this run.
	Stored int `json:"stored"`
	// AlreadyPresent traces were in the table with the same content (an earlier replay, or a
	// write that landed after all).
	AlreadyPresent int `json:"already_present"`
	// Conflicting traces were in the table under the same invocation id with other content: the
	// table keeps its copy. ConflictingIDs names them (the first MaxListed, sorted).
	Conflicting    int      `json:"conflicting"`
	ConflictingIDs []string `json:"conflicting_ids,omitempty"`
	// Unreadable lines held a trace, or what is left of one, that could not be read: damaged, cut
	// short, longer than MaxLine, or a record split over several lines. UnreadableLines numbers
	// them (the first MaxListed, from 1).
	Unreadable      int   `json:"unreadable"`
	UnreadableLines []int `json:"unreadable_lines,omitempty"`
	// Expired traces are past their retention: stored, they could never be read.
	Expired int `json:"expired"`
	// Failed traces could not be put or compared (errors, deadline); replaying the input again
	// retries them.
	Failed int `json:"failed"`
	// Skipped are log records and lines of text without a trace (an export's own structure,
	// such as its header or brackets, is not counted).
	Skipped int `json:"skipped"`
}

// MaxListed bounds the ids and line numbers Counts lists; the counts are always whole.
const MaxListed = 100

// MaxLine is the longest line read, 4 MiB; a longer line is counted unreadable, and the next
// line is read. The largest trace the table can hold is a 400 KB item (DynamoDB's limit); the
// log line that carries it encodes at most 6 bytes of JSON per byte of item (a control
// character escaped as \u00XX is the worst case), plus the line's other fields (a few hundred
// bytes): under 2.5 MiB. Quoted once more in a Logs Insights export (\" or "" for a quote,
// \\u00XX for an escape), at most 7 bytes per byte: under 2.9 MiB. So no trace that could be
// stored is ever refused for its length. The service's own traces are far smaller (a few KB).
const MaxLine = 4 << 20

// ErrDeadline names a replay stopped by its deadline or an interrupt.
var ErrDeadline = errors.New("deadline reached or interrupted before every trace was put")

// Replayer puts logged traces into the table at a bounded rate.
type Replayer struct {
	Store   Putter
	Rate    float64 // puts per second at most
	Workers int     // puts in flight at most
	Log     *slog.Logger
	Now     func() time.Time // nil: the wall clock
}

// job is one trace to put, and the line it was read from.
type job struct {
	t    lookup.Trace
	line int
}

// tally is the counts of a replay under way, safe for concurrent use.
type tally struct {
	mu sync.Mutex
	c  Counts
}

func (t *tally) add(f func(*Counts)) { t.mu.Lock(); f(&t.c); t.mu.Unlock() }

func (t *tally) result() Counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.c
	c.ConflictingIDs = slices.Clone(c.ConflictingIDs)
	slices.Sort(c.ConflictingIDs)
	c.UnreadableLines = slices.Clone(c.UnreadableLines)
	slices.Sort(c.UnreadableLines)
	return c
}

// Replay reads the input line by line and puts every trace it holds. It returns when the input
// is read and every put has ended, or when ctx ends (the traces not put then are counted failed,
// and the error says so); an error reading the input ends it too. A line that cannot be read
// never does.
func (r Replayer) Replay(ctx context.Context, in io.Reader) (Counts, error) {
	now := r.Now
	if now == nil {
		now = time.Now
	}
	log := r.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &tally{}
	jobs := make(chan job)
	var wg sync.WaitGroup
	pace := time.NewTicker(max(time.Duration(float64(time.Second)/r.Rate), time.Microsecond))
	defer pace.Stop()
	for range max(r.Workers, 1) {
		wg.Go(func() {
			for j := range jobs {
				select {
				case <-pace.C:
				case <-ctx.Done():
					c.add(func(c *Counts) { c.Failed++ })
					continue
				}
				r.put(ctx, j, c, log)
			}
		})
	}
	p := &parser{log: log, counts: c, trace: func(line int, t lookup.Trace) {
		if !now().Before(t.ExpiresAt) {
			c.add(func(c *Counts) { c.Expired++ })
			return
		}
		select {
		case jobs <- job{t: t, line: line}:
		case <-ctx.Done():
			c.add(func(c *Counts) { c.Failed++ })
		}
	}}
	readErr := readLines(in, p.line, p.tooLong)
	close(jobs)
	wg.Wait()
	switch {
	case readErr != nil:
		return c.result(), fmt.Errorf("read the input: %w", readErr)
	case ctx.Err() != nil:
		return c.result(), fmt.Errorf("%w: %v", ErrDeadline, ctx.Err())
	}
	return c.result(), nil
}

// put stores one trace unless its id is stored; a stored copy is compared with it, and one
// with other content is reported by its id.
func (r Replayer) put(ctx context.Context, j job, c *tally, log *slog.Logger) {
	id := j.t.InvocationID
	stored, err := r.Store.PutTraceIfAbsent(ctx, j.t)
	switch {
	case err != nil:
		log.Error("trace not stored", "invocation_id", id, "line", j.line, "error", port.SafeError(err))
		c.add(func(c *Counts) { c.Failed++ })
		return
	case stored:
		c.add(func(c *Counts) { c.Stored++ })
		return
	}
	had, err := r.Store.GetTrace(ctx, id)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		// Present, but past its own expiry in the table (DynamoDB deletes late): nothing that
		// could be read differs.
		c.add(func(c *Counts) { c.AlreadyPresent++ })
	case err != nil:
		log.Error("stored copy not read back to compare", "invocation_id", id, "line", j.line, "error", port.SafeError(err))
		c.add(func(c *Counts) { c.Failed++ })
	case same(had, j.t):
		c.add(func(c *Counts) { c.AlreadyPresent++ })
	default:
		log.Warn("conflicting copy: the table holds another trace under this invocation id and keeps it",
			"invocation_id", id, "line", j.line)
		c.add(func(c *Counts) {
			c.Conflicting++
			if len(c.ConflictingIDs) < MaxListed {
				c.ConflictingIDs = append(c.ConflictingIDs, id)
			}
		})
	}
}

// same reports whether two traces are the same record: their table items, as JSON reads them.
func same(a, b lookup.Trace) bool {
	return reflect.DeepEqual(asJSON(a), asJSON(b))
}

func asJSON(t lookup.Trace) any {
	item, err := lookup.TraceItem(t)
	if err != nil {
		return err.Error()
	}
	raw, _ := json.Marshal(item)
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
}

// readLines calls fn with every line of the input (without its end of line) and its number from
// 1, and tooLong with the number of every line longer than MaxLine, which it reads past.
func readLines(in io.Reader, fn func(n int, line []byte), tooLong func(n int)) error {
	br := bufio.NewReaderSize(in, 64<<10)
	var buf []byte
	for n := 1; ; n++ {
		buf = buf[:0]
		read, over := 0, false
		for {
			chunk, err := br.ReadSlice('\n')
			read += len(chunk)
			if !over {
				if len(buf)+len(chunk) > MaxLine+2 { // the line's end of line ("\r\n") aside
					over, buf = true, buf[:0]
				} else {
					buf = append(buf, chunk...)
				}
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			if read > 0 {
				if over {
					tooLong(n)
				} else {
					fn(n, buf)
				}
			}
			if err != nil { // io.EOF
				return nil
			}
			break
		}
	}
}

// parser reads the lines of a log or an export.
type parser struct {
	log    *slog.Logger
	counts *tally
	trace  func(line int, t lookup.Trace)
}

// maxDepth bounds how deep a message may sit in others ("@message" holding a line holding
// "@message" ...): an export holds a log line, which holds the trace.
const maxDepth = 4

var bom = []byte("\xef\xbb\xbf")

// line reads one line by what it holds.
func (p *parser) line(n int, line []byte) {
	line = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(line), bom))
	if len(line) == 0 {
		return
	}
	if obj, ok := record(line); ok {
		p.message(n, obj, 0)
		return
	}
	if line[0] == '[' && p.array(n, line, 0) {
		return
	}
	if line[0] == '"' && p.member(n, line) {
		return
	}
	if p.csvRow(n, line) {
		return
	}
	if v := bytes.TrimSuffix(line, []byte(",")); json.Valid(v) || structure(line) {
		return // a value or the brackets of a document spread over lines
	}
	if damaged(line) {
		p.unreadable(n, "a damaged or partial trace line")
		return
	}
	p.counts.add(func(c *Counts) { c.Skipped++ })
}

func (p *parser) tooLong(n int) {
	p.unreadable(n, fmt.Sprintf("longer than %d bytes, the most a storable trace's line takes; not read", MaxLine))
}

func (p *parser) unreadable(n int, why string) {
	p.log.Warn("unreadable trace line", "line", n, "reason", why)
	p.counts.add(func(c *Counts) {
		c.Unreadable++
		if len(c.UnreadableLines) < MaxListed {
			c.UnreadableLines = append(c.UnreadableLines, n)
		}
	})
}

// record finds a log record in text: a whole JSON object, possibly after a prefix without
// quotes (a timestamp, a request id).
func record(text []byte) ([]byte, bool) {
	i := bytes.IndexByte(text, '{')
	if i < 0 || bytes.IndexByte(text[:i], '"') >= 0 {
		return nil, false
	}
	obj := bytes.TrimSpace(text[i:])
	return obj, json.Valid(obj)
}

// inner is the log record a value holds: the value itself when it is an object, the record in
// its text when it is a string.
func inner(v json.RawMessage) ([]byte, bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return nil, false
	}
	if v[0] == '{' {
		return v, true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return nil, false
	}
	return record(bytes.TrimSpace([]byte(s)))
}

// message reads one log record (or export row): its trace, or the record it holds.
func (p *parser) message(n int, obj []byte, depth int) {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil || depth > maxDepth {
		p.skipOrDamaged(n, obj)
		return
	}
	if raw, ok := m["trace"]; ok {
		p.traceOf(n, raw)
		return
	}
	for _, key := range []string{"@message", "message"} {
		if raw, ok := m[key]; ok {
			if rec, ok := inner(raw); ok {
				p.message(n, rec, depth+1)
			} else {
				p.skipOrDamaged(n, raw)
			}
			return
		}
	}
	if raw, ok := m["results"]; ok && p.array(n, raw, depth+1) { // GetQueryResults
		return
	}
	if field, ok := m["field"]; ok { // one {"field", "value"} of a GetQueryResults row
		if string(field) != `"@message"` {
			return // @timestamp, @ptr ...: the row's other fields
		}
		if rec, ok := inner(m["value"]); ok {
			p.message(n, rec, depth+1)
		} else {
			p.skipOrDamaged(n, m["value"])
		}
		return
	}
	p.skipOrDamaged(n, obj)
}

// skipOrDamaged counts a record without a readable trace: unreadable when it holds what is left
// of one, else skipped.
func (p *parser) skipOrDamaged(n int, v []byte) {
	if damaged(v) {
		p.unreadable(n, "a damaged or partial trace")
		return
	}
	p.counts.add(func(c *Counts) { c.Skipped++ })
}

// traceOf decodes the value of a "trace" key.
func (p *parser) traceOf(n int, raw json.RawMessage) {
	var item map[string]any
	if err := json.Unmarshal(raw, &item); err != nil || item == nil {
		p.unreadable(n, `"trace" is not an object`)
		return
	}
	t, err := lookup.TraceFromItem(item)
	if err != nil {
		p.unreadable(n, err.Error())
		return
	}
	p.trace(n, t)
}

// array reads a JSON array element by element: export rows, log records, GetQueryResults rows
// (arrays of {"field", "value"}), strings holding log lines. An array cut short keeps the
// elements before the cut. It reports false when text does not open an array.
func (p *parser) array(n int, text []byte, depth int) bool {
	dec := json.NewDecoder(bytes.NewReader(text))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return false
	}
	for dec.More() {
		var el json.RawMessage
		if err := dec.Decode(&el); err != nil {
			if rest := text[min(int(dec.InputOffset()), len(text)):]; damaged(rest) {
				p.unreadable(n, "an array cut short or damaged")
			}
			return true
		}
		switch el = bytes.TrimSpace(el); {
		case len(el) > 0 && el[0] == '[' && depth < maxDepth:
			p.array(n, el, depth+1)
		case len(el) > 0 && el[0] == '{':
			p.message(n, el, depth)
		default:
			if rec, ok := inner(el); ok {
				p.message(n, rec, depth)
			}
		}
	}
	return true
}

// member reads a line that is one member of an object spread over lines, `"name": value` with
// an optional comma: the log line an export's "@message" or "value" holds, or a "trace". Other
// members are an export's structure. It reports false for a line that is not a member.
func (p *parser) member(n int, line []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(line))
	var name string
	if dec.Decode(&name) != nil {
		return false
	}
	rest := bytes.TrimSpace(line[dec.InputOffset():])
	if len(rest) == 0 || rest[0] != ':' {
		// A string alone: an element of an array spread over lines.
		if len(rest) > 0 && string(rest) != "," {
			return false
		}
		if rec, ok := inner(line[:dec.InputOffset()]); ok {
			p.message(n, rec, 0)
		}
		return true
	}
	value := bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(rest[1:]), []byte(",")))
	holds := name == "trace" || name == "@message" || name == "message" || name == "value"
	if !json.Valid(value) {
		if len(value) == 0 || (value[0] != '{' && value[0] != '[') || holds {
			return false // cut short, or a record split over lines: not read here
		}
		return true // an object or array of the structure opens
	}
	switch {
	case name == "trace":
		p.traceOf(n, value)
	case holds:
		if rec, ok := inner(value); ok {
			p.message(n, rec, 0)
		}
	}
	return true
}

// csvRow reads a row of a CSV export: every field that holds a log record. The header (a field
// named @message) holds none. It reports false for a line that is not such a row.
func (p *parser) csvRow(n int, line []byte) bool {
	cr := csv.NewReader(bytes.NewReader(line))
	cr.LazyQuotes, cr.FieldsPerRecord = true, -1
	fields, err := cr.Read()
	if err != nil {
		return false
	}
	found := false
	for _, f := range fields {
		f := bytes.TrimSpace([]byte(f))
		if bytes.Equal(f, []byte("@message")) {
			return true
		}
		if rec, ok := record(f); ok {
			p.message(n, rec, 0)
			found = true
		}
	}
	return found
}

// structure reports whether a line holds only brackets, braces, commas and colons.
func structure(line []byte) bool {
	return len(bytes.Trim(line, "[]{},: \t")) == 0
}

// damaged reports whether text holds what is left of a trace: its key, its item's partition key
// or its sort key (TRACE, near the item's end, so that a line cut at its front is known too),
// quoted as a log line, a JSON export or a CSV field quotes them.
func damaged(text []byte) bool {
	for _, m := range damageMarks {
		if bytes.Contains(text, m) {
			return true
		}
	}
	return false
}

var damageMarks = [][]byte{[]byte(`trace"`), []byte(`trace\"`), []byte(`"INV#`), []byte(`\"INV#`),
	[]byte(`"` + lookup.TraceSortKey + `"`), []byte(`"` + lookup.TraceSortKey + `\"`)}
