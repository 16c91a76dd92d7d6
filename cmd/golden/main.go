// Command golden records what the lookup service answers to every question of the evaluation
// sets, so that two builds can be compared byte for byte: each question of each set (YAML and
// JSON Lines, every language) on four paths (the demo provider, the demo provider without the
// language field, and the ideal and realistic semantic stand-ins of eval/) goes through Lookup and
// Ask, and one JSON line per question holds the full lookup response, its relevance signals, the
// trace's retrieval details and the ask response. Invocation ids and latencies are left out, the
// only fields that differ between two runs of one build.
//
//	go run ./cmd/golden -o before.jsonl eval/*.yaml eval/*.jsonl
//	(change the code)
//	go run ./cmd/golden -o after.jsonl eval/*.yaml eval/*.jsonl && cmp before.jsonl after.jsonl
//
// `make golden` writes the recording to GOLDEN (default golden.jsonl) and, when GOLDEN_BASE names
// an earlier recording, compares the two.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/eval"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

func main() {
	out := flag.String("o", "golden.jsonl", "the file the recording is written to")
	flag.Parse()
	if err := run(*out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// record is one line of the recording.
type record struct {
	Path     string               `json:"path"`
	Set      string               `json:"set"`
	ID       string               `json:"id"`
	Question string               `json:"question"`
	Language string               `json:"language"`
	Lookup   *lookup.Result       `json:"lookup,omitempty"`
	Error    string               `json:"error,omitempty"`
	Signals  *retrieval.Signals   `json:"signals,omitempty"`
	Trace    *lookup.TraceDetails `json:"trace,omitempty"`
	Ask      *lookup.Answer       `json:"ask,omitempty"`
	AskError string               `json:"ask_error,omitempty"`
}

func run(out string, paths []string) error {
	if len(paths) == 0 {
		return errors.New("usage: golden [-o file] <set.yaml or set.jsonl> [more sets]")
	}
	c, err := knowledge.Embedded()
	if err != nil {
		return err
	}
	ix := lexical.Build(c)
	sets, all, err := loadSets(paths)
	if err != nil {
		return err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ways := []way{
		{name: "demo", provider: demo.New(ix)},
		{name: "demo-nolang", provider: demo.New(ix), noLang: true},
		{name: "ideal", provider: eval.NewScripted(ix, all)},
		{name: "realistic", provider: eval.NewRealistic(ix, all)},
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	ctx := context.Background()
	n := 0
	for _, wy := range ways {
		traces := store.NewMemory()
		svc := retrieval.New(ix, wy.provider, traces, retrieval.DefaultOptions(), quiet)
		for _, p := range paths {
			for _, q := range sets[p] {
				r, err := recordOne(ctx, svc, traces, wy, p, q)
				if err != nil {
					return err
				}
				line, err := json.Marshal(r)
				if err != nil {
					return err
				}
				w.Write(line)
				w.WriteByte('\n')
				n++
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d lookups and asks recorded in %s\n", n, out)
	return nil
}

// way is one way of answering the questions: a provider, and whether the question's language
// is left out (then detected, as the API does without the field).
type way struct {
	name     string
	provider retrieval.LookupProvider
	noLang   bool
}

// loadSets reads every set of paths: by path, and all questions in order.
func loadSets(paths []string) (map[string][]eval.Question, []eval.Question, error) {
	var all []eval.Question
	sets := map[string][]eval.Question{}
	for _, p := range paths {
		qs, err := load(p)
		if err != nil {
			return nil, nil, err
		}
		sets[p] = qs
		all = append(all, qs...)
	}
	return sets, all, nil
}

// recordOne runs question q of the set at p through Lookup and Ask on svc, whose traces are
// traces, and returns its record without invocation ids and latencies.
func recordOne(ctx context.Context, svc *retrieval.Service, traces *store.Memory, wy way, p string, q eval.Question) (record, error) {
	lang := q.Language
	if wy.noLang || lang == "" {
		lang, _ = textproc.DetectLanguage(q.Question)
	}
	r := record{Path: wy.name, Set: filepath.Base(p), ID: q.ID, Question: q.Question, Language: lang}
	actor := port.Actor{ID: "golden"}
	res, sg, err := svc.LookupSignals(ctx, lookup.LookupRequest{Question: q.Question, Language: lang, TopK: 5, Actor: actor})
	if err != nil {
		r.Error = err.Error()
	} else {
		t, err := traces.GetTrace(ctx, res.InvocationID)
		if err != nil {
			return record{}, fmt.Errorf("%s %s: trace: %w", p, q.ID, err)
		}
		res.InvocationID = ""
		td := t.RetrievalDetails
		td.LatencyMs = lookup.Latency{}
		r.Lookup, r.Signals, r.Trace = &res, &sg, &td
	}
	ans, err := svc.Ask(ctx, lookup.AskRequest{Question: q.Question, Language: lang, Actor: actor})
	if err != nil {
		r.AskError = err.Error()
	} else {
		ans.InvocationID = ""
		r.Ask = &ans
	}
	return r, nil
}

// load reads an evaluation set: YAML (eval.Load) or JSON Lines of {"question", "language",
// "expect"}, whose questions are named by line.
func load(path string) ([]eval.Question, error) {
	if !strings.HasSuffix(path, ".jsonl") {
		return eval.Load(path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var qs []eval.Question
	for i, line := range bytes.Split(raw, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r struct {
			Question string  `json:"question"`
			Language *string `json:"language"`
			Expect   *string `json:"expect"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		q := eval.Question{ID: fmt.Sprintf("line %d", i+1), Question: r.Question, Expect: "none", Kind: eval.KindOffTopic}
		if r.Language != nil {
			q.Language = *r.Language
		}
		if r.Expect != nil {
			q.Expect, q.Kind = *r.Expect, eval.KindAnswerable
		}
		qs = append(qs, q)
	}
	return qs, nil
}
