package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/northstar-mobility/mobilityops-knowledge/eval"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

func main() {
	c, _ := knowledge.Embedded()
	ix := lexical.Build(c)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	qs, _ := eval.Load(os.Args[1])
	svc := retrieval.New(ix, demo.New(ix), store.NewMemory(), retrieval.DefaultOptions(), quiet)
	for _, q := range qs {
		if q.Expect2 == "" {
			continue
		}
		res, _ := svc.Lookup(context.Background(), lookup.LookupRequest{Question: q.Question, Language: q.Language, TopK: 5, Actor: port.Actor{ID: "x"}})
		var docs []string
		for _, b := range res.EvidenceBlocks {
			docs = append(docs, b.DocumentID)
		}
		var comps []string
		for _, c := range res.Relevance.Complements {
			comps = append(comps, fmt.Sprint(c.DocumentID, c.Covers))
		}
		fmt.Printf("%s want %s+%s | blocks %v | comps %v\n   %s\n", q.ID, q.Expect, q.Expect2, docs, comps, q.Question)
	}
}
