package request

import (
	"errors"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// Internal is the error of anything the classification does not know: its message names
// nothing of the cause, whose details belong in the log, as port.SafeError writes them.
var Internal = Error{Code: CodeInternal, Message: "internal error; quote the correlation_id when reporting it"}

// Classify is the one map of service errors to the contract's code, message and field, shared by
// the HTTP routes and the MCP tools; each adds only its own form (a status code, a tool error).
// An error of no known class is Internal.
func Classify(err error) Error {
	switch {
	case errors.Is(err, domain.ErrUnsupportedLanguage):
		return Error{Code: CodeUnsupportedLanguage, Field: "language",
			Message: "supported languages: " + strings.Join(textproc.Languages, ", ")}
	case errors.Is(err, domain.ErrUnknownProcedure):
		return Error{Code: CodeInvalidRequest, Field: "procedure",
			Message: "procedure names no procedure in force on the day asked; send an option's procedure from relevance.clarification"}
	case errors.Is(err, domain.ErrNotFound):
		return Error{Code: CodeNotFound, Message: "not found"}
	case errors.Is(err, port.ErrUnavailable):
		return Error{Code: CodeUnavailable, Message: "the knowledge provider is unavailable"}
	case errors.Is(err, domain.ErrInvalidReport):
		return Error{Code: CodeInvalidRequest, Message: "the report cannot be stored as given"}
	}
	return Internal
}
