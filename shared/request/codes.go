package request

// Codes of the API contract's error shape (docs/openapi.yaml), each declared here once: the HTTP
// routes and the MCP tools answer with them.
const (
	// CodeInvalidRequest and CodeUnsupportedLanguage are a field's (and CodeInvalidRequest a
	// service error's, request.Classify).
	CodeInvalidRequest      = "invalid_request"
	CodeUnsupportedLanguage = "unsupported_language"
	// CodeNotFound, CodeUnavailable and CodeInternal are a service error's (Classify).
	CodeNotFound    = "not_found"
	CodeUnavailable = "unavailable"
	CodeInternal    = "internal"
	// The HTTP edge's own: authentication, the route, the body's size and media type.
	CodeUnauthorized         = "unauthorized"
	CodeForbidden            = "forbidden"
	CodePayloadTooLarge      = "payload_too_large"
	CodeUnsupportedMediaType = "unsupported_media_type"
	CodeMethodNotAllowed     = "method_not_allowed"
)
