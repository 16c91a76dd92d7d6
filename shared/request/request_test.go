package request

import (
	"strings"
	"testing"
)

func TestQuestionAndLanguage(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name               string
		question, language *string
		q, lang            string
		detected           bool
		code, field        string
	}{
		{"explicit language wins", str("Karre springt nicht an"), str("en"), "Karre springt nicht an", "en", false, "", ""},
		{"missing language is detected", str("Karre springt nicht an, Kunde steht am Standstreifen"), nil, "Karre springt nicht an, Kunde steht am Standstreifen", "de", true, "", ""},
		{"undetectable is en", str("12345"), nil, "12345", "en", true, "", ""},
		{"missing question", nil, str("en"), "", "", false, CodeInvalidRequest, "question"},
		{"blank question", str("  \t"), nil, "", "", false, CodeInvalidRequest, "question"},
		{"too long", str(strings.Repeat("ä", MaxQuestionChars+1)), nil, "", "", false, CodeInvalidRequest, "question"},
		{"longest allowed", str(strings.Repeat("ä", MaxQuestionChars)), str("de"), strings.Repeat("ä", MaxQuestionChars), "de", false, "", ""},
		{"unsupported", str("Pneu crevé"), str("fr"), "", "", false, CodeUnsupportedLanguage, "language"},
	} {
		q, lang, detected, err := QuestionAndLanguage(tc.question, tc.language)
		if tc.code != "" {
			if err == nil || err.Code != tc.code || err.Field != tc.field || err.Message == "" {
				t.Errorf("%s: err %+v, want %s on %s", tc.name, err, tc.code, tc.field)
			}
			continue
		}
		if err != nil || q != tc.q || lang != tc.lang || detected != tc.detected {
			t.Errorf("%s: %q %q %v %v", tc.name, q, lang, detected, err)
		}
	}
	if _, err := Language(nil); err != nil {
		t.Errorf("missing language (GET /status) is en: %v", err)
	}
	if _, err := Language(str("fr")); err == nil || !strings.Contains(err.Message, "en, de") {
		t.Errorf("the message names the supported languages: %v", err)
	}
}
