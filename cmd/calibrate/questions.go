package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/eval"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
)

// labelled is one question with the procedure that answers it.
type labelled struct {
	// Where names the question in messages: "<file>:<line>" or "<file>:<id>".
	Where    string
	Question string
	// Language is the question's language, detected as the API detects it when the set names none.
	Language string
	// Expect is the id of the procedure that answers the question; empty when none does.
	Expect string
}

// set is one question file.
type set struct {
	Path string
	// Holdout sets are measured at the configured and the recommended pair, never used to choose.
	Holdout   bool
	Questions []labelled
}

// maxLineBytes bounds one JSON Lines record: a question is at most request.MaxQuestionChars
// characters, four bytes each at most, with room for the other fields.
const maxLineBytes = 4*request.MaxQuestionChars + 4096

// load reads a question set: JSON Lines (.jsonl) of {"question", "language", "expect"}, or one of
// the project's evaluation YAML files (answerable questions expect their procedure, off-topic and
// near-domain ones none). Every expected procedure must exist in the question's language.
func load(path string, corpus *knowledge.Corpus) ([]labelled, error) {
	var qs []labelled
	var err error
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl":
		qs, err = loadJSONL(path)
	case ".yaml", ".yml":
		qs, err = loadYAML(path)
	default:
		return nil, fmt.Errorf("%s: not a question set (.jsonl, or an evaluation .yaml)", path)
	}
	if err != nil {
		return nil, err
	}
	for _, q := range qs {
		if q.Expect != "" && corpus.Document(q.Language, q.Expect) == nil {
			return nil, fmt.Errorf("%s: expect %q is not a procedure of language %s", q.Where, q.Expect, q.Language)
		}
	}
	return qs, nil
}

// jsonlRecord is one line of a JSON Lines set. Expect must be present (a procedure id, or null
// for a question no procedure answers), so that a misspelt key is an error, not a negative.
// Other keys (an id, a note) are allowed and ignored.
type jsonlRecord struct {
	Question *string         `json:"question"`
	Language *string         `json:"language"`
	Expect   json.RawMessage `json:"expect"`
}

func loadJSONL(path string) ([]labelled, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), maxLineBytes)
	var qs []labelled
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		where := fmt.Sprintf("%s:%d", path, n)
		var r jsonlRecord
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		var expect *string
		if len(r.Expect) == 0 {
			return nil, fmt.Errorf("%s: expect is required (a procedure id, or null when no procedure answers)", where)
		}
		if err := json.Unmarshal(r.Expect, &expect); err != nil || (expect != nil && strings.TrimSpace(*expect) == "") {
			return nil, fmt.Errorf("%s: expect must be a procedure id or null", where)
		}
		q, err := question(where, r.Question, r.Language)
		if err != nil {
			return nil, err
		}
		if expect != nil {
			q.Expect = *expect
		}
		qs = append(qs, q)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s: a line is longer than %d bytes", path, maxLineBytes)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return qs, nil
}

func loadYAML(path string) ([]labelled, error) {
	es, err := eval.Load(path)
	if err != nil {
		return nil, err
	}
	qs := make([]labelled, 0, len(es))
	for _, e := range es {
		var lang *string
		if e.Language != "" {
			lang = &e.Language
		}
		q, err := question(path+":"+e.ID, &e.Question, lang)
		if err != nil {
			return nil, err
		}
		if e.Kind == eval.KindAnswerable {
			q.Expect = e.Expect
		}
		qs = append(qs, q)
	}
	return qs, nil
}

// question applies the API's rules to a question and its language: the same limits, and a
// missing language detected.
func question(where string, text, language *string) (labelled, error) {
	q, lang, _, err := request.QuestionAndLanguage(text, language)
	if err != nil {
		return labelled{}, fmt.Errorf("%s: %s", where, err.Message)
	}
	return labelled{Where: where, Question: q, Language: lang}, nil
}
