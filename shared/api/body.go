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
// occurs once per object, nesting stays within maxBodyDepth, and every string (keys too) is text
// (textProblem). encoding/json would accept duplicate keys (the last wins) and replace invalid
// UTF-8 and lone surrogates with U+FFFD without a word, so these checks read the raw string
// literals. The field of an error is the top-level member it occurs in. Trailing data after the
// first value is left to decode.
func checkBody(raw []byte) *Error {
	type frame struct {
		object    bool
		expectKey bool
		keys      map[string]struct{}
	}
	var stack []*frame
	member := "" // the top-level member being read
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers are not checked here; as float64 a huge one would fail as the wrong type
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return jsonError(err)
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
					return invalid(member, fmt.Sprintf("the body nests deeper than %d levels", maxBodyDepth))
				}
				stack = append(stack, &frame{object: v == '{', expectKey: v == '{', keys: map[string]struct{}{}})
				continue
			default:
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return nil
				}
				top = stack[len(stack)-1]
			}
		case string:
			lit := raw[start:dec.InputOffset()]
			lit = lit[bytes.IndexByte(lit, '"'):] // what precedes the literal is white space, ':' or ','
			problem := textProblem(lit)
			if top != nil && top.object && top.expectKey {
				if problem != "" {
					return invalid(member, "a key of the body is not text: it holds "+problem)
				}
				if len(stack) == 1 {
					member = textproc.Clip(v, 64)
				}
				if _, dup := top.keys[v]; dup {
					if len(stack) == 1 {
						return invalid(member, fmt.Sprintf("the key %q occurs more than once", textproc.Clip(v, 64)))
					}
					return invalid(member, fmt.Sprintf("the key %q occurs more than once in an object of %q", textproc.Clip(v, 64), member))
				}
				top.keys[v] = struct{}{}
				top.expectKey = false
				continue
			}
			if problem != "" {
				if member == "" {
					return invalid("", "the body holds a string that is not text: it holds "+problem)
				}
				return invalid(member, member+" must be text: it holds "+problem)
			}
		}
		// A value is complete.
		if top == nil {
			return nil
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

// decode reads a JSON object body into v after the contract's content-type and size checks and
// the checks of checkBody (text, duplicate keys, depth).
func decode(c *call, v any) *Error {
	if len(c.req.Body) > MaxBody {
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodePayloadTooLarge,
			Message: fmt.Sprintf("request body is larger than %d bytes", MaxBody)}
	}
	if len(strings.TrimSpace(string(c.req.Body))) == 0 {
		return invalid("", "a JSON request body is required")
	}
	mt, _, err := mime.ParseMediaType(c.req.Header["content-type"])
	if err != nil || mt != "application/json" {
		return &Error{Status: http.StatusUnsupportedMediaType, Code: CodeUnsupportedMediaType,
			Message: "Content-Type must be application/json"}
	}
	if err := checkBody(c.req.Body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(c.req.Body))
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return invalid("", "the body must hold exactly one JSON object")
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
