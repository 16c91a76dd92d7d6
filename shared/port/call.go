package port

import "slices"

// Actor is the authenticated caller. It always comes from the transport's authentication, never
// from a request body.
type Actor struct {
	ID     string
	Scopes []string
}

// HasScope reports whether the actor holds scope.
func (a Actor) HasScope(scope string) bool { return slices.Contains(a.Scopes, scope) }

// Call names whom a provider call is made for: RAGcore receives the actor and the correlation id
// with every request.
type Call struct {
	Actor         Actor
	CorrelationID string
}
