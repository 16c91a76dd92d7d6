// Package request holds the rules of the request fields that the HTTP routes and the MCP tools
// share, and the one parse of each operation both run (Lookup, Ask, Status), so that both refuse
// the same input with the same code, field and message.
package request

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// Request limits: the longest question, in characters, and the range of top_k.
const (
	MaxQuestionChars = 2000
	DefaultTopK      = 5
	MaxTopK          = 20
)

// TopK checks top_k: missing means DefaultTopK.
func TopK(topK *int) (int, *Error) {
	if topK == nil {
		return DefaultTopK, nil
	}
	if *topK < 1 || *topK > MaxTopK {
		return 0, Invalid("top_k", fmt.Sprintf("top_k must be an integer from 1 to %d", MaxTopK))
	}
	return *topK, nil
}

// Error is a request field that breaks a rule: a transport answers it as its own bad-request
// error with the same code, field and message.
type Error struct {
	Code    string
	Field   string // empty when the request as a whole is at fault
	Message string
}

func (e *Error) Error() string { return e.Message }

// Invalid is an invalid_request error of one field.
func Invalid(field, msg string) *Error {
	return &Error{Code: CodeInvalidRequest, Field: field, Message: msg}
}

// QuestionAndLanguage checks the fields lookup and ask share. A missing (or null) language is
// detected from the valid question ("en" when it cannot be told), and detected says so; a given
// language always wins and must be supported.
//
// The question is analysed, and sent to the provider, NFKC-normalised (textproc.Normalize), and
// normalisation can make a text eighteen times longer (U+FDFA): the limit holds both for the
// text as received and for the text normalised. The first bounds the work of the second, which
// is counted without making the normalised text (textproc.NormalizedLen). A question that holds
// nothing but white space and invisible format characters is blank.
func QuestionAndLanguage(question, language *string) (q, lang string, detected bool, err *Error) {
	if question == nil || strings.TrimFunc(*question, blank) == "" {
		return "", "", false, Invalid("question", "question is required and must not be blank")
	}
	if n := utf8.RuneCountInString(*question); n > MaxQuestionChars {
		return "", "", false, Invalid("question", fmt.Sprintf("question has %d characters; the limit is %d", n, MaxQuestionChars))
	}
	if textproc.NormalizedLen(*question, MaxQuestionChars) > MaxQuestionChars {
		return "", "", false, Invalid("question", fmt.Sprintf("question has more than %d characters once normalised "+
			"(Unicode NFKC, as it is analysed: U+FDFA alone becomes 18); the limit is %d", MaxQuestionChars, MaxQuestionChars))
	}
	if language == nil {
		lang, _ = textproc.DetectLanguage(*question)
		return *question, lang, true, nil
	}
	if lang, err = Language(language); err != nil {
		return "", "", false, err
	}
	return *question, lang, false, nil
}

// blank reports whether r leaves no trace in the normalised text a question is analysed as:
// white space, or a format character (textproc.Normalize drops those).
func blank(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) }

// Language checks a language: missing means "en" (GET /status; lookup and ask detect it instead
// through QuestionAndLanguage), anything unsupported is unsupported_language with the supported
// list.
func Language(language *string) (string, *Error) {
	if language == nil {
		return "en", nil
	}
	if !textproc.Supported(*language) {
		return "", &Error{Code: CodeUnsupportedLanguage, Field: "language",
			Message: fmt.Sprintf("language %q is not supported; supported languages: %s",
				textproc.Clip(*language, 16), strings.Join(textproc.Languages, ", "))}
	}
	return *language, nil
}

// JSONKind names the JSON type a Go kind decodes from, for "must be a JSON ..." messages.
func JSONKind(goKind string) string {
	switch goKind {
	case "int", "int64", "int32", "uint", "uint64":
		return "integer"
	case "string":
		return "string"
	case "struct", "map":
		return "object"
	case "slice", "array":
		return "array"
	case "bool":
		return "boolean"
	}
	return "value of another type"
}

// Marshal encodes v as compact JSON without HTML escaping, so that "Title > Section" reads as
// written; the HTTP routes and the MCP tools answer with it alike.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnknownMember returns the first member of the JSON object raw that the struct v (a pointer
// to it) does not define by the exact name of its json tag, and whether there is one: a request
// member a route does not define ("topk" for "top_k", "Language" for "language") is an error,
// never silently ignored in favour of a default, nor matched case-insensitively as
// encoding/json would. raw that is not an object has no members to refuse.
func UnknownMember(raw []byte, v any) (string, bool) {
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return "", false
	}
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return "", false
	}
	var unknown []string
	for name := range members {
		if !definesMember(t, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return "", false
	}
	slices.Sort(unknown)
	return unknown[0], true
}

// definesMember reports whether the struct type t has a field encoded as the member name.
func definesMember(t reflect.Type, name string) bool {
	for f := range t.Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case tag == "" && f.Anonymous && f.Type.Kind() == reflect.Struct:
			if definesMember(f.Type, name) {
				return true
			}
		case cmp.Or(tag, f.Name) == name:
			return true
		}
	}
	return false
}

// UnknownMemberMessage is the message of a refused member.
func UnknownMemberMessage(name string) string {
	return fmt.Sprintf("%q is not a member of this request", name)
}
