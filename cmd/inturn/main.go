// Command inturn asks the questions of the evaluation sets on the embedded corpus as a running
// lookup function meets them: every question once, untimed, so that the caches a function keeps
// (words, phrases, hit reasons) are warm, then -n of them in turn inside askInTurn, on the demo
// provider with the in-memory trace store. It measures nothing itself: a profiler that counts
// only inside askInTurn does (`make bench-instructions` runs it under valgrind's callgrind and
// prints the instructions, branches and mispredicted branches of one lookup; BENCHMARKS.md).
//
//	go run ./cmd/inturn -n 1000 -eval eval
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
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

func main() {
	n := flag.Int("n", 1000, "lookups asked in turn after the warm-up (at most the evaluation sets' questions)")
	dir := flag.String("eval", "eval", "the folder of the evaluation sets")
	flag.Parse()
	if err := run(*n, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "inturn:", err)
		os.Exit(1)
	}
}

func run(n int, dir string) error {
	qs, err := eval.LoadDir(dir)
	if err != nil {
		return err
	}
	if n < 1 || n > len(qs) {
		return fmt.Errorf("-n must be between 1 and %d, the evaluation sets' questions", len(qs))
	}
	c, err := knowledge.Embedded()
	if err != nil {
		return err
	}
	ix := lexical.Build(c)
	svc := retrieval.New(ix, demo.New(ix), store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, q := range qs {
		if err := ask(svc, q); err != nil {
			return err
		}
	}
	return askInTurn(svc, qs[:n])
}

// askInTurn asks each question once, in order: the lookups a profiler counts. It is kept out of
// line so that one can count inside it alone (callgrind's --toggle-collect).
//
//go:noinline
func askInTurn(svc *retrieval.Service, qs []eval.Question) error {
	for _, q := range qs {
		if err := ask(svc, q); err != nil {
			return err
		}
	}
	return nil
}

// ask looks one question up as POST /lookup would, with the blocks' default top_k.
func ask(svc *retrieval.Service, q eval.Question) error {
	_, err := svc.Lookup(context.Background(), lookup.LookupRequest{Question: q.Question, Language: q.Language, TopK: 5,
		Actor: port.Actor{ID: "inturn"}})
	if err != nil {
		return fmt.Errorf("%s: %w", q.ID, err)
	}
	return nil
}
