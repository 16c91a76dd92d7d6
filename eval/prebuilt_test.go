package eval

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// TestPrebuiltIndexAnswersAsBuilt: a lookup over the embedded prebuilt index (what a function
// loads at a cold start) returns exactly what a lookup over an index built from the parsed
// procedures returns, for every question of every evaluation set, on the demo and the scripted
// semantic paths.
func TestPrebuiltIndexAnswersAsBuilt(t *testing.T) {
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	built := lexical.Build(c)
	procs, syns, err := knowledge.EmbeddedSources()
	if err != nil {
		t.Fatal(err)
	}
	loaded, _, err := lexical.Load(knowledge.EmbeddedIndex(), lexical.LoadOptions{Procs: procs, Syns: syns})
	if err != nil {
		t.Fatal(err)
	}
	qs, err := LoadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	answer := func(ix *lexical.Index, semantic bool, q Question) string {
		var p retrieval.LookupProvider = demo.New(ix)
		if semantic {
			p = NewScripted(ix, qs)
		}
		svc := retrieval.New(ix, p, store.NewMemory(), retrieval.DefaultOptions(), quiet)
		r, err := svc.Lookup(context.Background(), lookup.LookupRequest{Question: q.Question, Language: q.Language, TopK: 5,
			Actor: port.Actor{ID: "eval"}})
		if err != nil {
			t.Fatal(err)
		}
		r.InvocationID = ""
		b, _ := json.Marshal(r)
		return string(b)
	}
	for _, semantic := range []bool{false, true} {
		for _, q := range qs {
			if a, b := answer(built, semantic, q), answer(loaded, semantic, q); a != b {
				t.Fatalf("%s (semantic %v): built and prebuilt indexes answer differently:\n%s\n%s", q.ID, semantic, a, b)
			}
		}
	}
}
