package request

import "context"

type argumentsErrorKey struct{}

// WithArgumentsError returns a copy of ctx that carries e: the first problem in the raw JSON of
// an MCP tool call's arguments (a duplicate key, a string that is not text), which the API finds
// before the MCP SDK decodes the message and, decoding it, would let the last duplicate win and
// replace what is not text with U+FFFD. The tool answers it as its own error, as the HTTP route
// answers the same member of its body.
func WithArgumentsError(ctx context.Context, e *Error) context.Context {
	return context.WithValue(ctx, argumentsErrorKey{}, e)
}

// ArgumentsError returns the error WithArgumentsError put in ctx, or nil.
func ArgumentsError(ctx context.Context) *Error {
	e, _ := ctx.Value(argumentsErrorKey{}).(*Error)
	return e
}
