package request

import (
	"fmt"
	"unicode"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
)

// LookupBody holds the members of a lookup as a caller sends them: the POST /lookup body and
// the lookup_knowledge tool's arguments alike. A member left out is nil.
type LookupBody struct {
	Question  *string `json:"question"`
	Language  *string `json:"language"`
	TopK      *int    `json:"top_k"`
	AsOf      *string `json:"as_of"`
	Procedure *string `json:"procedure"`
}

// AskBody holds the members of an ask: the POST /ask body and the ask_knowledge tool's
// arguments. It has no top_k: an ask that sends one is refused as for any member it lacks.
type AskBody struct {
	Question  *string `json:"question"`
	Language  *string `json:"language"`
	AsOf      *string `json:"as_of"`
	Procedure *string `json:"procedure"`
}

// Lookup is the one check of a lookup's members, which the HTTP route and the MCP tool both
// run on what they decoded: question and language (their text first, then QuestionAndLanguage),
// top_k, as_of, procedure, in this order; the first that breaks a rule is the error. detected
// says that the language was detected from the question. The request's actor and correlation
// id are the transport's to fill in.
func Lookup(b LookupBody) (req lookup.LookupRequest, detected bool, err *Error) {
	q, lang, detected, err := question(b.Question, b.Language)
	if err != nil {
		return req, false, err
	}
	topK, err := TopK(b.TopK)
	if err != nil {
		return req, false, err
	}
	asOf, procedure, err := day(b.AsOf, b.Procedure)
	if err != nil {
		return req, false, err
	}
	return lookup.LookupRequest{Question: q, Language: lang, TopK: topK, AsOf: asOf, Procedure: procedure}, detected, nil
}

// Ask is the one check of an ask's members (Lookup's, without top_k).
func Ask(b AskBody) (req lookup.AskRequest, detected bool, err *Error) {
	q, lang, detected, err := question(b.Question, b.Language)
	if err != nil {
		return req, false, err
	}
	asOf, procedure, err := day(b.AsOf, b.Procedure)
	if err != nil {
		return req, false, err
	}
	return lookup.AskRequest{Question: q, Language: lang, AsOf: asOf, Procedure: procedure}, detected, nil
}

// Status is the one check of a status request's language (GET /status's query parameter, the
// knowledge_status tool's argument): text, then a supported language; missing means "en".
func Status(language *string) (string, *Error) {
	if language != nil {
		if err := Text("language", *language); err != nil {
			return "", err
		}
	}
	return Language(language)
}

// question checks the text of question and language, then the two (QuestionAndLanguage).
func question(question, language *string) (q, lang string, detected bool, err *Error) {
	for _, f := range []struct {
		name string
		v    *string
	}{{"question", question}, {"language", language}} {
		if f.v != nil {
			if err := Text(f.name, *f.v); err != nil {
				return "", "", false, err
			}
		}
	}
	return QuestionAndLanguage(question, language)
}

// day checks as_of and procedure.
func day(asOf, procedure *string) (string, string, *Error) {
	a, err := AsOf(asOf)
	if err != nil {
		return "", "", err
	}
	p, err := Procedure(procedure)
	if err != nil {
		return "", "", err
	}
	return a, p, nil
}

// Text refuses a field that holds NUL or another control character (tab, CR and LF aside). The
// HTTP routes find these in the raw body first (with invalid UTF-8 and lone surrogates, which
// decoding would have replaced with U+FFFD), with the same message, so that for them this check
// never fires; it is what refuses a value handed on decoded (the MCP SDK's arguments) and a
// query parameter, whose escapes can carry one ("?language=%0B").
func Text(name, s string) *Error {
	for _, r := range s {
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' {
			return Invalid(name, name+" must be text: it holds "+ControlProblem(r))
		}
	}
	return nil
}

// ControlProblem names a control character that is not text, as the refusals say it.
func ControlProblem(r rune) string {
	if r == 0 {
		return "a NUL character"
	}
	return fmt.Sprintf("a control character (U+%04X); only tab, CR and LF are allowed", r)
}
