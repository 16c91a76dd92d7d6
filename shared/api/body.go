package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// maxBodyDepth bounds how deep a request body may nest. No body of the contract nests at all;
// the bound only keeps a hostile body from costing more than its size.
const maxBodyDepth = 32

// checkBody walks the raw JSON of a request body once, before it is decoded: every object key
// occurs once per object, nesting stays within maxBodyDepth, every string (keys too) is text
// (textProblem), and nothing but white space follows the first value. encoding/json would accept
// duplicate keys (the last wins) and replace invalid UTF-8 and lone surrogates with U+FFFD
// without a word, so these checks read the raw string literals. The field of an error is the
// top-level member it occurs in.
func checkBody(raw []byte) *Error {
	err, _ := checkBodyAt(raw)
	return err
}

// checkBodyAt is checkBody for a body that holds another body's members in the object at the
// path root (an MCP message's params.arguments): the first duplicate key or string that is not
// text inside that object is returned apart, as inRoot, named as the member of that object it
// occurs in, in the words the HTTP route uses for the same member of its body; the walk goes on
// through the rest of the body, whose problems are err, named by the top-level member.
func checkBodyAt(raw []byte, root ...string) (err, inRoot *Error) {
	w := &bodyWalk{raw: raw, root: root, dec: json.NewDecoder(bytes.NewReader(raw))}
	w.dec.UseNumber() // numbers are not checked here; as float64 a huge one would fail as the wrong type
	for {
		e, done := w.next()
		if done {
			return e, w.inRoot
		}
	}
}

// bodyWalk is checkBodyAt's walk over a body's tokens: the open objects and arrays, and the
// first problem inside root.
type bodyWalk struct {
	raw    []byte
	root   []string
	dec    *json.Decoder
	stack  []*bodyFrame
	inRoot *Error
}

// bodyFrame is an open object or array.
type bodyFrame struct {
	object    bool
	expectKey bool
	key       string // the member being read, in an object
	keys      map[string]struct{}
}

// base is the depth of the object whose members errors name: the body's (0), or root's when
// the walk is inside it.
func (w *bodyWalk) base() int {
	if len(w.root) == 0 || len(w.stack) <= len(w.root) || !w.stack[len(w.root)].object {
		return 0
	}
	for i, k := range w.root {
		if !w.stack[i].object || w.stack[i].key != k {
			return 0
		}
	}
	return len(w.root)
}

// member names the member being read, in the words of the object errors name.
func (w *bodyWalk) member() string {
	if len(w.stack) == 0 {
		return ""
	}
	return textproc.Clip(w.stack[w.base()].key, 64)
}

// report returns e, unless it occurs inside root: the first such is kept as inRoot.
func (w *bodyWalk) report(e *Error) *Error {
	if len(w.root) == 0 || w.base() != len(w.root) {
		return e
	}
	if w.inRoot == nil {
		w.inRoot = e
	}
	return nil
}

// end checks what follows the body's one value.
func (w *bodyWalk) end() (*Error, bool) {
	if len(bytes.TrimLeft(w.raw[w.dec.InputOffset():], " \t\r\n")) > 0 {
		return invalid("", "the body must hold exactly one JSON object"), true
	}
	return nil, true
}

// next reads one token: the error that ends the walk and true, or false to go on.
func (w *bodyWalk) next() (*Error, bool) {
	start := w.dec.InputOffset()
	tok, err := w.dec.Token()
	if errors.Is(err, io.EOF) {
		if len(w.stack) > 0 { // cut off inside a value
			return jsonError(io.ErrUnexpectedEOF), true
		}
		return nil, true
	}
	if err != nil {
		return jsonError(err), true
	}
	var top *bodyFrame
	if len(w.stack) > 0 {
		top = w.stack[len(w.stack)-1]
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{', '[':
			if len(w.stack) == maxBodyDepth {
				return invalid(w.member(), fmt.Sprintf("the body nests deeper than %d levels", maxBodyDepth)), true
			}
			w.stack = append(w.stack, &bodyFrame{object: v == '{', expectKey: v == '{', keys: map[string]struct{}{}})
			return nil, false
		default:
			w.stack = w.stack[:len(w.stack)-1]
			if len(w.stack) == 0 {
				return w.end()
			}
			top = w.stack[len(w.stack)-1]
		}
	case string:
		lit := w.raw[start:w.dec.InputOffset()]
		lit = lit[bytes.IndexByte(lit, '"'):] // what precedes the literal is white space, ':' or ','
		problem := textProblem(lit)
		if top != nil && top.object && top.expectKey {
			if e := w.key(top, v, problem); e != nil {
				return e, true
			}
			return nil, false
		}
		if problem != "" {
			e := invalid("", "the body holds a string that is not text: it holds "+problem)
			if m := w.member(); m != "" {
				e = invalid(m, m+" must be text: it holds "+problem)
			}
			if e := w.report(e); e != nil {
				return e, true
			}
		}
	}
	// A value is complete.
	if top == nil {
		return w.end()
	}
	if top.object {
		top.expectKey = true
	}
	return nil, false
}

// key reads a key of the object top: a key that is not text or occurs twice is an error.
func (w *bodyWalk) key(top *bodyFrame, v, problem string) *Error {
	if problem != "" {
		if e := w.report(invalid(w.member(), "a key of the body is not text: it holds "+problem)); e != nil {
			return e
		}
	}
	top.key = v
	if _, dup := top.keys[v]; dup && problem == "" {
		m, msg := w.member(), fmt.Sprintf("the key %q occurs more than once", textproc.Clip(v, 64))
		if len(w.stack)-w.base() > 1 {
			msg += fmt.Sprintf(" in an object of %q", m)
		}
		if e := w.report(invalid(m, msg)); e != nil {
			return e
		}
	}
	top.keys[v] = struct{}{}
	top.expectKey = false
	return nil
}

// textProblem says why the JSON string literal lit (quotes included, syntax already checked) is
// not text, or returns "" when it is: invalid UTF-8, a lone UTF-16 surrogate escape, NUL or
// another control character (tab, CR and LF aside), raw or escaped.
func textProblem(lit []byte) string {
	end := len(lit) - 1 // the closing quote
	for i := 1; i < end; {
		c := lit[i]
		var r rune
		switch {
		case c == '\\' && lit[i+1] == 'u':
			r = hex4(lit[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				if r >= 0xDC00 || i+6 > end || lit[i] != '\\' || lit[i+1] != 'u' {
					return "a lone UTF-16 surrogate (\\u" + string(lit[i-4:i]) + ")"
				}
				lo := hex4(lit[i+2 : i+6])
				if lo < 0xDC00 || lo > 0xDFFF {
					return "a lone UTF-16 surrogate (\\u" + string(lit[i-4:i]) + ")"
				}
				r = utf16.DecodeRune(r, lo)
				i += 6
			}
		case c == '\\':
			switch lit[i+1] {
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			default: // '"', '\\', '/', 'n', 'r', 't'
				r = ' '
			}
			i += 2
		case c < utf8.RuneSelf:
			r = rune(c)
			i++
		default:
			var size int
			r, size = utf8.DecodeRune(lit[i:end])
			if r == utf8.RuneError && size == 1 {
				return "bytes that are not UTF-8"
			}
			i += size
		}
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' {
			return request.ControlProblem(r)
		}
	}
	return ""
}

// hex4 reads the four hex digits of a \u escape, which the decoder has checked.
func hex4(b []byte) rune {
	r, _ := strconv.ParseUint(string(b), 16, 32)
	return rune(r)
}

// decode reads a JSON object body into v after the checks of checkJSON.
func decode(c *call, v any) *Error {
	if err := checkJSON(c); err != nil {
		return err
	}
	if err := checkBody(c.body); err != nil {
		return err
	}
	if err := json.NewDecoder(bytes.NewReader(c.body)).Decode(v); err != nil {
		return jsonError(err)
	}
	if name, ok := request.UnknownMember(c.body, v); ok {
		return invalid(name, request.UnknownMemberMessage(name))
	}
	return nil
}

// checkJSON makes the checks every JSON request body gets before its content is read, in this
// order: its size, that there is one, and its content type (jsonContentType). checkBody reads
// the content next.
func checkJSON(c *call) *Error {
	if len(c.body) > MaxBody {
		return errTooLarge
	}
	if len(strings.TrimSpace(string(c.body))) == 0 {
		return invalid("", "a JSON request body is required")
	}
	return jsonContentType(header(c.r, "Content-Type"))
}

// jsonContentType checks the Content-Type of a JSON body: application/json, and no charset but
// UTF-8, the one encoding of JSON. A body said to be UTF-16 would otherwise be read as what it
// is not.
func jsonContentType(header string) *Error {
	mt, params, err := mime.ParseMediaType(header)
	if err != nil || mt != "application/json" {
		return &Error{Status: http.StatusUnsupportedMediaType, Code: request.CodeUnsupportedMediaType,
			Message: "Content-Type must be application/json"}
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return &Error{Status: http.StatusUnsupportedMediaType, Code: request.CodeUnsupportedMediaType,
			Message: "Content-Type must be application/json; a charset, when given, must be utf-8"}
	}
	return nil
}

func jsonError(err error) *Error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return invalid(te.Field, fmt.Sprintf("field %q must be a JSON %s", te.Field, request.JSONKind(te.Type.Kind().String())))
	case errors.As(err, &te):
		return invalid("", "the body must be a JSON object")
	case errors.As(err, &se):
		return invalid("", fmt.Sprintf("the body is not valid JSON (at byte %d)", se.Offset))
	}
	return invalid("", "the body is not valid JSON")
}
