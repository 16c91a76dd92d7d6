package main

// detect stands in for the API's language detection of a question sent without a language.
func detect(question string) string { return "en" }
