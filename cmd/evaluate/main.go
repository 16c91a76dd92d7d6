// Command evaluate measures retrieval quality on the question sets in eval/ with the embedded
// corpus, on four paths: the semantic path over the ideal RAGcore stand-in of eval/semantic.go
// (the answer always first), the semantic path over the realistic stand-in of eval/realistic.go
// (close scores, the answer displaced or missing for about a third of the questions), the demo
// provider (the embedded default, lexical), and the demo provider without the language field.
// The stand-ins and the path without language run on the sets that name each question's
// answering section and fact. Each path prints a table of its figures per set and language (the
// columns are in eval.Legend), then a summary pools the development sets and the held-out sets:
// `go run ./cmd/evaluate eval/*.yaml`; -v also lists every question whose answer is not what the
// set expects, wrong-grounded ones with their primary block and alternatives.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/eval"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// heldOutSets are the sets nothing is tuned on; so is every set whose file name holds "holdout".
// Every other set is a development set.
var heldOutSets = []string{"natural-holdout.yaml", "holdout.yaml"}

func heldOut(path string) bool {
	base := filepath.Base(path)
	return slices.Contains(heldOutSets, base) || strings.Contains(base, "holdout")
}

func main() {
	verbose := flag.Bool("v", false, "list every question whose answer is not what the set expects")
	flag.Parse()
	if err := run(os.Stdout, flag.Args(), *verbose); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// path is one way of answering the questions.
type path struct {
	name, title string
	// service answers a set's questions.
	service  func(qs []eval.Question) *retrieval.Service
	opts     eval.Options
	sections bool // runs only on sets that name the answering sections
}

func run(w io.Writer, paths []string, verbose bool) error {
	c, err := knowledge.Embedded()
	if err != nil {
		return err
	}
	ways := waysOn(lexical.Build(c))
	sets := map[string][]eval.Question{}
	for _, p := range paths {
		if sets[p], err = eval.Load(p); err != nil {
			return err
		}
	}
	ctx := context.Background()
	var summary []eval.Row
	var pooled []string
	fmt.Fprintln(w, eval.Legend)
	for _, way := range ways {
		rows, misses, groups, err := measure(ctx, way, paths, sets)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\n== %s: %s\n", way.name, way.title)
		eval.PrintTable(w, rows)
		if verbose && len(misses) > 0 {
			fmt.Fprintf(w, "misses (%s):\n", way.name)
			for _, m := range misses {
				fmt.Fprintln(w, "   ", m)
			}
		}
		for _, g := range groups {
			for _, lang := range g.langs {
				summary = append(summary, eval.Row{Name: way.name + ", " + g.name, Language: lang, Report: *g.by[lang]})
			}
			if len(g.sets) > 0 {
				pooled = append(pooled, fmt.Sprintf("  %s, %s: %s", way.name, g.name, strings.Join(g.sets, " ")))
			}
		}
	}
	fmt.Fprintln(w, "\n== summary: the development sets (rules tuned on them) and the held-out sets (untouched), pooled")
	eval.PrintTable(w, summary)
	fmt.Fprintln(w, "sets pooled:")
	for _, p := range pooled {
		fmt.Fprintln(w, p)
	}
	return nil
}

// waysOn are the four paths measured over ix, in the order printed.
func waysOn(ix *lexical.Index) []path {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	demoSvc := retrieval.New(ix, demo.New(ix), store.NewMemory(), options(), quiet)
	demoPath := func([]eval.Question) *retrieval.Service { return demoSvc }
	return []path{
		{name: "ideal", title: "semantic path, ideal stand-in (eval/semantic.go: the answer always first)", sections: true,
			service: func(qs []eval.Question) *retrieval.Service {
				return retrieval.New(ix, eval.NewScripted(ix, qs), store.NewMemory(), retrieval.DefaultOptions(), quiet)
			}},
		{name: "realistic", title: "semantic path, realistic stand-in (eval/realistic.go: close scores, the answer displaced or missing for a third)", sections: true,
			service: func(qs []eval.Question) *retrieval.Service {
				return retrieval.New(ix, eval.NewRealistic(ix, qs), store.NewMemory(), retrieval.DefaultOptions(), quiet)
			}},
		{name: "demo", title: "demo provider (embedded default, lexical)", service: demoPath},
		{name: "demo-nolang", title: "demo provider without the language field", sections: true, service: demoPath,
			opts: eval.Options{NoLanguage: true, Detect: detect}},
	}
}

// group pools the reports of the development sets, or of the held-out ones, per language.
type group struct {
	name  string
	langs []string
	by    map[string]*eval.Report
	sets  []string
}

// add pools r, a report in lang.
func (g *group) add(lang string, r eval.Report) {
	if g.by == nil {
		g.by = map[string]*eval.Report{}
	}
	if g.by[lang] == nil {
		g.langs = append(g.langs, lang)
		g.by[lang] = &eval.Report{}
	}
	g.by[lang].Add(r)
}

// measure runs way on every set of paths it applies to: a row per set and language, the misses,
// and the development and held-out groups pooled.
func measure(ctx context.Context, way path, paths []string, sets map[string][]eval.Question) ([]eval.Row, []string, []*group, error) {
	groups := []*group{{name: "dev"}, {name: "held out"}}
	var rows []eval.Row
	var misses []string
	for _, p := range paths {
		qs := sets[p]
		hasFacts := slices.ContainsFunc(qs, func(q eval.Question) bool { return q.Fact != "" })
		if way.sections && !hasFacts {
			continue
		}
		svc := way.service(qs)
		opts := way.opts
		opts.Ask = hasFacts
		g := groups[0]
		if heldOut(p) {
			g = groups[1]
		}
		g.sets = append(g.sets, filepath.Base(p))
		langs, by := eval.ByLanguage(qs)
		for _, lang := range langs {
			r, err := eval.Run(ctx, svc, by[lang], opts)
			if err != nil {
				return nil, nil, nil, err
			}
			name := strings.TrimSuffix(filepath.Base(p), ".yaml")
			rows = append(rows, eval.Row{Name: name, Language: lang, Report: r})
			g.add(lang, r)
			for _, m := range r.Misses {
				misses = append(misses, name+" "+lang+": "+m)
			}
		}
	}
	return rows, misses, groups, nil
}
