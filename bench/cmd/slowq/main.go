// Command slowq looks at the slow tail of the project's lookup on one generated corpus: the
// questions of the evaluation sets that take longest, a profile of a chosen few, and every
// question's result for comparing two builds.
//
//	go run ./cmd/slowq -n 10000 -dir /tmp/corpus10000                  # the slowest 40, and their ids
//	go run ./cmd/slowq -n 10000 -dir /tmp/corpus10000 -ids a,b -reps 30 -prof cpu.prof
//	go run ./cmd/slowq -n 10000 -dir /tmp/corpus10000 -dump results.jsonl
//
// It writes the corpus of -n procedures (package gen) and its index.bin into -dir when the folder
// has no index.bin yet, then loads the prebuilt index as a function does (lexical.Load, static) and
// builds the lookup service over it with the demo provider and an in-memory store.
//
// Without -ids or -dump, every question is asked once to warm up, then -runs times; it prints the
// median and 99th percentile of the per-question medians, the -top slowest questions and their
// ids on one line, ready for -ids. With -ids it asks those questions -reps times and prints the
// mean time per question (with -prof, under a CPU profile). With -dump it writes every question's
// lookup result as one JSON line, the invocation id blanked, so that two builds' outputs compare
// byte for byte with cmp.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/bench/gen"
	"github.com/northstar-mobility/mobilityops-knowledge/bench/systems"
	"github.com/northstar-mobility/mobilityops-knowledge/eval"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
)

func main() {
	n := flag.Int("n", 10000, "procedures of the generated corpus, over both languages")
	dir := flag.String("dir", "", "the corpus folder (required): generated with its index.bin when it has no index.bin")
	evalDir := flag.String("eval", "../eval", "the folder of the evaluation sets (eval/*.yaml)")
	top := flag.Int("top", 40, "slowest questions to print")
	runs := flag.Int("runs", 5, "timed runs per question")
	ids := flag.String("ids", "", "ask only these question ids (comma-separated), -reps times")
	reps := flag.Int("reps", 1, "passes over the -ids questions")
	prof := flag.String("prof", "", "write a CPU profile of the -ids passes to this file")
	dump := flag.String("dump", "", "write every question's lookup result as JSON lines to this file")
	flag.Parse()
	if err := run(*n, *dir, *evalDir, *top, *runs, *ids, *reps, *prof, *dump); err != nil {
		fmt.Fprintln(os.Stderr, "slowq:", err)
		os.Exit(1)
	}
}

func run(n int, dir, evalDir string, top, runs int, ids string, reps int, prof, dump string) error {
	if dir == "" {
		return errors.New("-dir is required")
	}
	svc, err := service(n, dir)
	if err != nil {
		return err
	}
	qs, err := eval.LoadDir(evalDir)
	if err != nil {
		return err
	}
	ctx := context.Background()
	ask := func(q eval.Question) (lookup.Result, error) { return svc.Lookup(ctx, q.Language, q.Question) }
	switch {
	case dump != "":
		return dumpAll(dump, qs, ask)
	case ids != "":
		return repeat(qs, strings.Split(ids, ","), reps, prof, ask)
	default:
		return slowest(qs, runs, top, ask)
	}
}

// service loads dir's prebuilt index (writing the corpus and the index first when it has none)
// and builds the lookup service over it.
func service(n int, dir string) (*systems.Project, error) {
	file := filepath.Join(dir, lexical.PrebuiltFile)
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		if _, err := gen.Write(dir, n, gen.DefaultSeed); err != nil {
			return nil, err
		}
		c, err := knowledge.LoadDir(dir)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(file, lexical.Encode(lexical.Build(c), c), 0o644); err != nil {
			return nil, err
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	procs := os.DirFS(dir)
	syns, err := fs.Sub(procs, knowledge.SynonymsDir)
	if err != nil {
		return nil, err
	}
	ix, _, err := lexical.Load(b, lexical.LoadOptions{Procs: procs, Syns: syns, Static: true})
	if err != nil {
		return nil, err
	}
	return systems.ProjectOf(ix), nil
}

type asker func(eval.Question) (lookup.Result, error)

func dumpAll(file string, qs []eval.Question, ask asker) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, q := range qs {
		res, err := ask(q)
		if err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", q.ID, err)
		}
		res.InvocationID = ""
		if err := enc.Encode(res); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

func repeat(qs []eval.Question, ids []string, reps int, prof string, ask asker) error {
	var sel []eval.Question
	for _, q := range qs {
		if slices.Contains(ids, q.ID) {
			sel = append(sel, q)
		}
	}
	if len(sel) == 0 {
		return errors.New("no question has one of the -ids")
	}
	for _, q := range sel { // warm up
		if _, err := ask(q); err != nil {
			return err
		}
	}
	if prof != "" {
		f, err := os.Create(prof)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	start := time.Now()
	for range max(reps, 1) {
		for _, q := range sel {
			if _, err := ask(q); err != nil {
				return err
			}
		}
	}
	fmt.Printf("%d questions x %d: %v per question\n", len(sel), max(reps, 1), time.Since(start)/time.Duration(len(sel)*max(reps, 1)))
	return nil
}

func slowest(qs []eval.Question, runs, top int, ask asker) error {
	for _, q := range qs { // warm up
		if _, err := ask(q); err != nil {
			return err
		}
	}
	type timed struct {
		d time.Duration
		q eval.Question
	}
	res := make([]timed, 0, len(qs))
	for _, q := range qs {
		ds := make([]time.Duration, 0, runs)
		for range max(runs, 1) {
			start := time.Now()
			if _, err := ask(q); err != nil {
				return err
			}
			ds = append(ds, time.Since(start))
		}
		slices.Sort(ds)
		res = append(res, timed{ds[len(ds)/2], q})
	}
	slices.SortFunc(res, func(a, b timed) int { return int(b.d - a.d) })
	all := make([]time.Duration, len(res))
	for i, r := range res {
		all[i] = r.d
	}
	slices.Sort(all)
	fmt.Printf("%d questions: median %v, p99 %v\n", len(all), all[len(all)/2], all[len(all)*99/100])
	var list []string
	for _, r := range res[:min(top, len(res))] {
		list = append(list, r.q.ID)
		fmt.Printf("%10v %s %q\n", r.d, r.q.ID, r.q.Question)
	}
	fmt.Println(strings.Join(list, ","))
	return nil
}
