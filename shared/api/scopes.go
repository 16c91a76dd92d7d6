package api

import (
	"encoding/json"
	"slices"
	"strings"
)

// scopeClaims are the claims a token's scopes arrive in: scope (RFC 8693, RFC 9068), or scp,
// the name some identity providers use. API Gateway's JWT authorizer reads either to check a
// route's AuthorizationScopes; the handler reads both, and admits what either holds.
var scopeClaims = []string{"scope", "scp"}

// claimScopes returns the scopes of a JWT authorizer's claims and of the list the authorizer
// hands on beside them (authorizerScopes, often absent).
func claimScopes(claims map[string]string, authorizerScopes []string) []string {
	var out []string
	for _, name := range scopeClaims {
		out = append(out, parseScopes(claims[name])...)
	}
	for _, s := range authorizerScopes {
		out = append(out, parseScopes(s)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// parseScopes reads one scope claim as API Gateway's HTTP API hands it to the function: a
// space-separated string ("knowledge:read knowledge:sync"), or a JSON array in the token, which
// the gateway flattens to its elements between brackets and separated by spaces
// ("[knowledge:read knowledge:sync]"). JSON text of an array (`["knowledge:read"]`), as other
// integrations pass claims, is read too. A scope never holds a space, a bracket or a quote
// (RFC 6749, section 3.3), so none of these readings can take one scope for another.
func parseScopes(v string) []string {
	v = strings.TrimSpace(v)
	inner, ok := strings.CutPrefix(v, "[")
	if !ok {
		return strings.Fields(v)
	}
	inner, ok = strings.CutSuffix(inner, "]")
	if !ok {
		return strings.Fields(v) // not an array: no scope starts with a bracket, none will match
	}
	var list []string
	if json.Unmarshal([]byte(v), &list) == nil {
		var out []string
		for _, s := range list {
			out = append(out, strings.Fields(s)...)
		}
		return out
	}
	return strings.Fields(inner)
}
