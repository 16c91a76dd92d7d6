package domain

import "errors"

// Errors the transport maps to status codes (api's errors.go, the MCP tools' errors).
var (
	// ErrNotFound is returned for something that does not exist or has expired (a record, an
	// invocation); the transport answers 404.
	ErrNotFound = errors.New("not found")
	// ErrUnsupportedLanguage is returned for a language the corpus does not hold; the transport
	// answers 400 unsupported_language.
	ErrUnsupportedLanguage = errors.New("unsupported language")
	// ErrUnknownProcedure is returned for a confirmed procedure id that names no procedure in
	// force on the day asked; the transport answers 400 invalid_request naming procedure.
	ErrUnknownProcedure = errors.New("unknown procedure")
)
