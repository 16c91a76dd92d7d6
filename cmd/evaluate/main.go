// Command evaluate measures retrieval quality on the question sets in eval/ with the embedded
// corpus and the demo provider: `go run ./cmd/evaluate eval/dev.yaml eval/holdout.yaml`.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/northstar-mobility/mobilityops-knowledge/eval"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

func main() {
	verbose := flag.Bool("v", false, "list every question whose primary block is wrong")
	flag.Parse()
	c, err := knowledge.Embedded()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ix := lexical.Build(c)
	svc := retrieval.New(ix, demo.New(ix), store.NewMemory(), retrieval.DefaultOptions(),
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, path := range flag.Args() {
		qs, err := eval.Load(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		r, err := eval.Run(context.Background(), svc, qs)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		r.Print(os.Stdout, path)
		if *verbose {
			for _, m := range r.Misses {
				fmt.Println("  ", m)
			}
		}
	}
}
