// Package tracelog reads traces that could not be stored from the functions' logs (log lines, or a
// CloudWatch Logs Insights export as CSV or JSON) and puts them into the table, once each.
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
	"strings"
	"sync"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
)

// Putter stores a trace unless its invocation id is stored already; store.Dynamo implements it.
type Putter interface {
	PutTraceIfAbsent(ctx context.Context, t retrieval.Trace) (stored bool, err error)
}

// Counts is the outcome of a replay.
type Counts struct {
	// Stored traces were put by this run.
	Stored int `json:"stored"`
	// AlreadyPresent traces were in the table (an earlier replay, or a write that succeeded
	// after reporting a failure).
	AlreadyPresent int `json:"already_present"`
	// Unreadable lines held a "trace" that could not be decoded as one.
	Unreadable int `json:"unreadable"`
	// Expired traces are past their retention: stored, they could never be read.
	Expired int `json:"expired"`
	// Failed traces could not be put (errors, deadline); replaying the input again retries them.
	Failed int `json:"failed"`
	// Skipped lines are other log lines, with no "trace".
	Skipped int `json:"skipped"`
}

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

// maxLine bounds one log line or message: CloudWatch Logs events are at most 256 KiB.
const maxLine = 1 << 20

// Replay reads the input in the given format (auto, lines, csv, json) and puts every trace.
// It returns when the input is read and every put has ended, or when ctx ends (the traces not
// put then are counted failed, and the error says so).
func (r Replayer) Replay(ctx context.Context, in io.Reader, format string) (Counts, error) {
	now := r.Now
	if now == nil {
		now = time.Now
	}
	var (
		mu sync.Mutex
		c  Counts
	)
	add := func(f func(*Counts)) { mu.Lock(); f(&c); mu.Unlock() }
	jobs := make(chan retrieval.Trace)
	var wg sync.WaitGroup
	pace := time.NewTicker(max(time.Duration(float64(time.Second)/r.Rate), time.Microsecond))
	defer pace.Stop()
	for range r.Workers {
		wg.Go(func() {
			for t := range jobs {
				select {
				case <-pace.C:
				case <-ctx.Done():
					add(func(c *Counts) { c.Failed++ })
					continue
				}
				stored, err := r.Store.PutTraceIfAbsent(ctx, t)
				switch {
				case err != nil:
					r.Log.Error("trace not stored", "invocation_id", t.InvocationID, "error", port.SafeError(err))
					add(func(c *Counts) { c.Failed++ })
				case stored:
					add(func(c *Counts) { c.Stored++ })
				default:
					add(func(c *Counts) { c.AlreadyPresent++ })
				}
			}
		})
	}
	readErr := readMessages(in, format, func(pos string, msg []byte) {
		t, ok, err := traceOf(msg)
		switch {
		case !ok:
			add(func(c *Counts) { c.Skipped++ })
			return
		case err != nil:
			r.Log.Warn("unreadable trace line", "at", pos, "error", err.Error())
			add(func(c *Counts) { c.Unreadable++ })
			return
		case !now().Before(t.ExpiresAt):
			add(func(c *Counts) { c.Expired++ })
			return
		}
		select {
		case jobs <- t:
		case <-ctx.Done():
			add(func(c *Counts) { c.Failed++ })
		}
	})
	close(jobs)
	wg.Wait()
	switch {
	case readErr != nil:
		return c, readErr
	case ctx.Err() != nil:
		return c, fmt.Errorf("%w: %v", ErrDeadline, ctx.Err())
	}
	return c, nil
}

// traceOf decodes the trace of one log line. ok is false for a line without a "trace" key
// (another log line); err is set for a line whose trace cannot be decoded.
func traceOf(msg []byte) (t retrieval.Trace, ok bool, err error) {
	if !bytes.Contains(msg, []byte(`"trace"`)) {
		return retrieval.Trace{}, false, nil
	}
	if i := bytes.IndexByte(msg, '{'); i > 0 {
		msg = msg[i:] // a timestamp or request id before the JSON
	}
	var line map[string]json.RawMessage
	if err := json.Unmarshal(msg, &line); err != nil {
		return retrieval.Trace{}, true, fmt.Errorf("not a JSON log line: %w", err)
	}
	raw, found := line["trace"]
	if !found {
		return retrieval.Trace{}, false, nil // "trace" inside another field's text
	}
	var item map[string]any
	if err := json.Unmarshal(raw, &item); err != nil || item == nil {
		return retrieval.Trace{}, true, errors.New(`"trace" is not an object`)
	}
	t, err = retrieval.TraceFromItem(item)
	return t, true, err
}

// readMessages calls fn with every log line of the input, in order, and where it was found.
func readMessages(in io.Reader, format string, fn func(pos string, msg []byte)) error {
	br := bufio.NewReaderSize(in, 64<<10)
	if format == "auto" {
		var err error
		if format, err = detect(br); err != nil {
			return err
		}
	}
	switch format {
	case "lines":
		return readLines(br, fn)
	case "csv":
		return readCSV(br, fn)
	case "json":
		return readJSON(br, fn)
	}
	return fmt.Errorf("unknown format %q: auto, lines, csv or json", format)
}

// detect tells the input's format from its first line: "[" opens a JSON export; "{" opens a
// log line when the line is a whole JSON value, else a JSON document (GetQueryResults, indented);
// a CSV header naming @message opens a CSV export; anything else is read as log lines.
func detect(br *bufio.Reader) (string, error) {
	head, err := br.Peek(64 << 10)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return "", err
	}
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimLeft(head, " \t\r\n")
	if len(trimmed) == 0 {
		return "lines", nil
	}
	first, _, _ := bytes.Cut(trimmed, []byte("\n"))
	switch trimmed[0] {
	case '[':
		return "json", nil
	case '{':
		if json.Valid(bytes.TrimSpace(first)) {
			return "lines", nil
		}
		return "json", nil
	}
	if header, err := csv.NewReader(bytes.NewReader(first)).Read(); err == nil && column(header, "@message") >= 0 {
		return "csv", nil
	}
	return "lines", nil
}

func readLines(br *bufio.Reader, fn func(string, []byte)) error {
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if len(line) == 0 {
			continue
		}
		pos := fmt.Sprintf("line %d", n)
		if !expand(pos, line, fn) {
			fn(pos, line)
		}
	}
	return sc.Err()
}

// expand reads a line that is itself a row of an export (an object with "@message", as
// newline-delimited exports hold them) or a whole GetQueryResults document on one line; it
// reports false for any other line.
func expand(pos string, line []byte, fn func(string, []byte)) bool {
	if !bytes.Contains(line, []byte(`"@message"`)) {
		return false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(line, &obj) != nil {
		return false
	}
	if _, ok := obj["trace"]; ok {
		return false
	}
	if m, ok := obj["@message"]; ok {
		fn(pos, unquote(m))
		return true
	}
	var rows []json.RawMessage
	if r, ok := obj["results"]; !ok || json.Unmarshal(r, &rows) != nil {
		return false
	}
	for i, row := range rows {
		fn(fmt.Sprintf("%s results[%d]", pos, i), messageOf(row))
	}
	return true
}

func readCSV(br *bufio.Reader, fn func(string, []byte)) error {
	if b, err := br.Peek(3); err == nil && string(b) == "\xef\xbb\xbf" {
		_, _ = br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("CSV header: %w", err)
	}
	col := column(header, "@message")
	if col < 0 {
		return fmt.Errorf("CSV header %v has no @message column", header)
	}
	for row := 2; ; row++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("CSV row %d: %w", row, err)
		}
		if col < len(rec) { // a short row has no message: nothing to replay
			fn(fmt.Sprintf("row %d", row), []byte(strings.TrimSpace(rec[col])))
		}
	}
}

func column(header []string, name string) int {
	for i, h := range header {
		if strings.TrimSpace(strings.TrimPrefix(h, "\xef\xbb\xbf")) == name {
			return i
		}
	}
	return -1
}

// readJSON reads a JSON export: an array of rows ({"@timestamp": ..., "@message": ...}), read
// row by row, or an object with "results" (GetQueryResults: rows of {"field", "value"}); the
// elements of an array may also be log records themselves, and an object without "results" is
// one row or record.
func readJSON(br *bufio.Reader, fn func(string, []byte)) error {
	dec := json.NewDecoder(br)
	for doc := 1; ; doc++ {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("JSON export: %w", err)
		}
		switch tok {
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				var row json.RawMessage
				if err := dec.Decode(&row); err != nil {
					return fmt.Errorf("JSON export: row %d: %w", i, err)
				}
				fn(fmt.Sprintf("[%d]", i), messageOf(row))
			}
		case json.Delim('{'):
			obj := map[string]json.RawMessage{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return fmt.Errorf("JSON export: document %d: %w", doc, err)
				}
				var v json.RawMessage
				if err := dec.Decode(&v); err != nil {
					return fmt.Errorf("JSON export: document %d: %w", doc, err)
				}
				key, _ := k.(string)
				obj[key] = v
			}
			var rows []json.RawMessage
			if r, ok := obj["results"]; ok && json.Unmarshal(r, &rows) == nil {
				for i, row := range rows {
					fn(fmt.Sprintf("results[%d]", i), messageOf(row))
				}
			} else {
				whole, _ := json.Marshal(obj)
				fn(fmt.Sprintf("document %d", doc), messageOf(whole))
			}
		default:
			return fmt.Errorf("JSON export: document %d is neither an array nor an object", doc)
		}
		if _, err := dec.Token(); err != nil { // the closing ] or }
			return fmt.Errorf("JSON export: document %d: %w", doc, err)
		}
	}
}

// messageOf is the log line a JSON export row holds: its "@message" (a string holding the line,
// or the record itself), the "value" of its {"field": "@message"} entry, or the row itself when
// it is a log record.
func messageOf(row json.RawMessage) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal(row, &obj) == nil {
		if m, ok := obj["@message"]; ok {
			return unquote(m)
		}
		return row
	}
	var fields []struct {
		Field string          `json:"field"`
		Value json.RawMessage `json:"value"`
	}
	if json.Unmarshal(row, &fields) == nil {
		for _, f := range fields {
			if f.Field == "@message" {
				return unquote(f.Value)
			}
		}
	}
	return row
}

// unquote is the text of a JSON string, or the raw value when it is not one.
func unquote(v json.RawMessage) []byte {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return []byte(strings.TrimSpace(s))
	}
	return v
}
