package main

import "github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"

// detect is the API's language detection of a question sent without a language.
func detect(question string) string {
	lang, _ := textproc.DetectLanguage(question)
	return lang
}
