// Package span lets the services mark the steps of a call (Start) and the values an operator
// searches traces by (Annotate) without knowing which tracer records them: the tracer that opened
// the invocation's span (shared/tracing) puts its Steps in the context, and without one both
// calls do nothing at the cost of a context look-up.
package span

import "context"

// Steps records a call's steps for one tracer.
type Steps interface {
	// Start opens a span named name under the one ctx carries; end closes it.
	Start(ctx context.Context, name string) (_ context.Context, end func())
	// Annotate records a's set values on the span ctx carries.
	Annotate(ctx context.Context, a Annotations)
}

// Annotations are the values an operator searches traces by, made X-Ray annotations (indexed).
// They are the only annotations the service records: a question's text has no field here, and
// never reaches a span. Empty fields are left out.
type Annotations struct {
	Provider      string
	EvidenceState string
	Language      string
	Layer         string
	InvocationID  string
}

// The annotations' keys, as X-Ray indexes them (letters, digits and underscores).
const (
	KeyProvider      = "provider"
	KeyEvidenceState = "evidence_state"
	KeyLanguage      = "language"
	KeyLayer         = "layer"
	KeyInvocationID  = "invocation_id"
)

// Pairs are a's set values, each under its key, in the order of the fields.
func (a Annotations) Pairs() [][2]string {
	all := [...][2]string{{KeyProvider, a.Provider}, {KeyEvidenceState, a.EvidenceState}, {KeyLanguage, a.Language},
		{KeyLayer, a.Layer}, {KeyInvocationID, a.InvocationID}}
	out := make([][2]string, 0, len(all))
	for _, kv := range all {
		if kv[1] != "" {
			out = append(out, kv)
		}
	}
	return out
}

type stepsKey struct{}

// With returns ctx carrying s, for the steps of the call ctx belongs to.
func With(ctx context.Context, s Steps) context.Context { return context.WithValue(ctx, stepsKey{}, s) }

// Start opens a span named name under the span ctx carries, through the tracer of its call; end
// closes it. Outside a traced call it records nothing.
func Start(ctx context.Context, name string) (_ context.Context, end func()) {
	if s, ok := ctx.Value(stepsKey{}).(Steps); ok {
		return s.Start(ctx, name)
	}
	return ctx, nothing
}

// Annotate records a's set values on the span ctx carries; outside a traced call it does
// nothing.
func Annotate(ctx context.Context, a Annotations) {
	if s, ok := ctx.Value(stepsKey{}).(Steps); ok {
		s.Annotate(ctx, a)
	}
}

func nothing() {}
