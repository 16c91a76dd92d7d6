package span

import (
	"context"
	"slices"
	"testing"
)

type recorder struct{ started, annotated []string }

func (r *recorder) Start(ctx context.Context, name string) (context.Context, func()) {
	r.started = append(r.started, name)
	return ctx, func() { r.started = append(r.started, "/"+name) }
}

func (r *recorder) Annotate(_ context.Context, a Annotations) {
	for _, kv := range a.Pairs() {
		r.annotated = append(r.annotated, kv[0]+"="+kv[1])
	}
}

func TestStepsGoToTheTracerOfTheCall(t *testing.T) {
	ctx, end := Start(context.Background(), "l0")
	end()
	Annotate(ctx, Annotations{Provider: "demo"})
	if ctx != context.Background() {
		t.Error("a step outside a traced call changed the context")
	}
	r := &recorder{}
	ctx = With(context.Background(), r)
	_, end = Start(ctx, "l0")
	end()
	Annotate(ctx, Annotations{Provider: "demo", Language: "de", InvocationID: "INV1"})
	if !slices.Equal(r.started, []string{"l0", "/l0"}) || !slices.Equal(r.annotated, []string{"provider=demo", "language=de", "invocation_id=INV1"}) {
		t.Errorf("started %v, annotated %v (empty fields are left out)", r.started, r.annotated)
	}
}
