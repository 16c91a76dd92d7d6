package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
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
	type frame struct {
		object    bool
		expectKey bool
		key       string // the member being read, in an object
		keys      map[string]struct{}
	}
	var stack []*frame
	// base is the depth of the object whose members errors name: the body's (0), or root's when
	// the walk is inside it.
	base := func() int {
		if len(root) == 0 || len(stack) <= len(root) || !stack[len(root)].object {
			return 0
		}
		for i, k := range root {
			if !stack[i].object || stack[i].key != k {
				return 0
			}
		}
		return len(root)
	}
	member := func() string {
		if len(stack) == 0 {
			return ""
		}
		return textproc.Clip(stack[base()].key, 64)
	}
	// report returns e, unless it occurs inside root: the first such is kept as inRoot.
	report := func(e *Error) *Error {
		if len(root) == 0 || base() != len(root) {
			return e
		}
		if inRoot == nil {
			inRoot = e
		}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers are not checked here; as float64 a huge one would fail as the wrong type
	// end checks what follows the body's one value.
	end := func() (*Error, *Error) {
		if len(bytes.TrimLeft(raw[dec.InputOffset():], " \t\r\n")) > 0 {
			return invalid("", "the body must hold exactly one JSON object"), inRoot
		}
		return nil, inRoot
	}
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if len(stack) > 0 { // cut off inside a value
				return jsonError(io.ErrUnexpectedEOF), inRoot
			}
			return nil, inRoot
		}
		if err != nil {
			return jsonError(err), inRoot
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if len(stack) == maxBodyDepth {
					return invalid(member(), fmt.Sprintf("the body nests deeper than %d levels", maxBodyDepth)), inRoot
				}
				stack = append(stack, &frame{object: v == '{', expectKey: v == '{', keys: map[string]struct{}{}})
				continue
			default:
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return end()
				}
				top = stack[len(stack)-1]
			}
		case string:
			lit := raw[start:dec.InputOffset()]
			lit = lit[bytes.IndexByte(lit, '"'):] // what precedes the literal is white space, ':' or ','
			problem := textProblem(lit)
			if top != nil && top.object && top.expectKey {
				if problem != "" {
					if e := report(invalid(member(), "a key of the body is not text: it holds "+problem)); e != nil {
						return e, inRoot
					}
				}
				top.key = v
				if _, dup := top.keys[v]; dup && problem == "" {
					m, msg := member(), fmt.Sprintf("the key %q occurs more than once", textproc.Clip(v, 64))
					if len(stack)-base() > 1 {
						msg += fmt.Sprintf(" in an object of %q", m)
					}
					if e := report(invalid(m, msg)); e != nil {
						return e, inRoot
					}
				}
				top.keys[v] = struct{}{}
				top.expectKey = false
				continue
			}
			if problem != "" {
				e := invalid("", "the body holds a string that is not text: it holds "+problem)
				if m := member(); m != "" {
					e = invalid(m, m+" must be text: it holds "+problem)
				}
				if e := report(e); e != nil {
					return e, inRoot
				}
			}
		}
		// A value is complete.
		if top == nil {
			return end()
		}
		if top.object {
			top.expectKey = true
		}
	}
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
			if r == 0 {
				return "a NUL character"
			}
			return fmt.Sprintf("a control character (U+%04X); only tab, CR and LF are allowed", r)
		}
	}
	return ""
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// decode reads a JSON object body into v after the checks of checkJSON.
func decode(c *call, v any) *Error {
	if err := checkJSON(c); err != nil {
		return err
	}
	if err := checkBody(c.req.Body); err != nil {
		return err
	}
	if err := json.NewDecoder(bytes.NewReader(c.req.Body)).Decode(v); err != nil {
		return jsonError(err)
	}
	if name, ok := request.UnknownMember(c.req.Body, v); ok {
		return invalid(name, request.UnknownMemberMessage(name))
	}
	return nil
}

// checkJSON makes the checks every JSON request body gets before its content is read, in this
// order: its size, that there is one, and its content type (jsonContentType). checkBody reads
// the content next.
func checkJSON(c *call) *Error {
	if len(c.req.Body) > MaxBody {
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodePayloadTooLarge,
			Message: fmt.Sprintf("request body is larger than %d bytes", MaxBody)}
	}
	if len(strings.TrimSpace(string(c.req.Body))) == 0 {
		return invalid("", "a JSON request body is required")
	}
	return jsonContentType(c.req.Header["content-type"])
}

// jsonContentType checks the Content-Type of a JSON body: application/json, and no charset but
// UTF-8, the one encoding of JSON. A body said to be UTF-16 would otherwise be read as what it
// is not.
func jsonContentType(header string) *Error {
	mt, params, err := mime.ParseMediaType(header)
	if err != nil || mt != "application/json" {
		return &Error{Status: http.StatusUnsupportedMediaType, Code: CodeUnsupportedMediaType,
			Message: "Content-Type must be application/json"}
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return &Error{Status: http.StatusUnsupportedMediaType, Code: CodeUnsupportedMediaType,
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
