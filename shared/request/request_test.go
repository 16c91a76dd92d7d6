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
		// The limit counts the text as it is analysed, NFKC-normalised: 2,000 × U+FDFA is 36,000
		// characters, 112 of them 2,016; 111 and two letters are 2,000.
		{"expands past the limit", str(strings.Repeat("\ufdfa", MaxQuestionChars)), nil, "", "", false, CodeInvalidRequest, "question"},
		{"expands just past the limit", str(strings.Repeat("\ufdfa", 112)), str("en"), "", "", false, CodeInvalidRequest, "question"},
		{"expands to the limit", str(strings.Repeat("\ufdfa", 111) + "ab"), str("en"), strings.Repeat("\ufdfa", 111) + "ab", "en", false, "", ""},
		{"ligatures past the limit", str(strings.Repeat("\ufb03", 667)), str("en"), "", "", false, CodeInvalidRequest, "question"},
		// Format characters vanish in normalisation: nothing else is blank.
		{"only invisible characters", str("\u200b\u2060 \ufeff\u00ad"), nil, "", "", false, CodeInvalidRequest, "question"},
		{"a combining mark alone is text", str("\u0301"), str("en"), "\u0301", "en", false, "", ""},
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
	// The refusal of a question that normalisation lengthens says so.
	q := strings.Repeat("\ufdfa", MaxQuestionChars)
	if _, _, _, err := QuestionAndLanguage(&q, nil); err == nil || !strings.Contains(err.Message, "normalised") {
		t.Errorf("2000 × U+FDFA: %v", err)
	}
	if _, err := Language(nil); err != nil {
		t.Errorf("missing language (GET /status) is en: %v", err)
	}
	if _, err := Language(str("fr")); err == nil || !strings.Contains(err.Message, "en, de") {
		t.Errorf("the message names the supported languages: %v", err)
	}
}
