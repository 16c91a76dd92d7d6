// Command evaluate measures retrieval quality on the question sets in eval/ with the embedded
// corpus, on two paths: the demo provider (the embedded default, lexical), and a semantic path
// over the scripted RAGcore stand-in of eval/semantic.go. Sets with quoted facts report, per
// language, the procedure top-1 and top-3, the deciding fact in the first three blocks and in
// /ask's excerpts, the grounded rate and the negatives not grounded, with and without the
// language field: `go run ./cmd/evaluate eval/natural-dev.yaml`.
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
	verbose := flag.Bool("v", false, "list every question whose answer is not what the set expects")
	flag.Parse()
	if err := run(os.Stdout, flag.Args(), *verbose); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(w io.Writer, paths []string, verbose bool) error {
	c, err := knowledge.Embedded()
	if err != nil {
		return err
	}
	ix := lexical.Build(c)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	demoSvc := retrieval.New(ix, demo.New(ix), store.NewMemory(), options(), quiet)
	ctx := context.Background()
	for _, path := range paths {
		qs, err := eval.Load(path)
		if err != nil {
			return err
		}
		semSvc := retrieval.New(ix, eval.NewScripted(ix, qs), store.NewMemory(), retrieval.DefaultOptions(), quiet)
		hasFacts := false
		for _, q := range qs {
			hasFacts = hasFacts || q.Fact != ""
		}
		langs, by := eval.ByLanguage(qs)
		type variant struct {
			name string
			svc  *retrieval.Service
			opts eval.Options
		}
		variants := []variant{{"demo", demoSvc, eval.Options{Ask: hasFacts}}}
		if hasFacts {
			variants = append(variants,
				variant{"demo, no language", demoSvc, eval.Options{NoLanguage: true, Detect: detect, Ask: true}},
				variant{"semantic", semSvc, eval.Options{Ask: true}})
		}
		for _, v := range variants {
			for _, lang := range langs {
				r, err := eval.Run(ctx, v.svc, by[lang], v.opts)
				if err != nil {
					return err
				}
				r.Print(w, fmt.Sprintf("%s [%s, %s]", path, lang, v.name))
				if verbose {
					for _, m := range r.Misses {
						fmt.Fprintln(w, "   ", m)
					}
				}
			}
		}
	}
	return nil
}
