package eval

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

func TestExp(t *testing.T) {
	c, _ := knowledge.Embedded()
	ix := lexical.Build(c)
	svc := retrieval.New(ix, demo.New(ix), store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	docDF := map[string]map[string]int{}
	for _, lang := range []string{"en", "de"} {
		l := ix.Lang(lang)
		df := map[string]int{}
		seen := map[string]map[int]bool{}
		for _, p := range l.Passages {
			for term := range p.Terms {
				if seen[term] == nil {
					seen[term] = map[int]bool{}
				}
				if !seen[term][p.Doc] {
					seen[term][p.Doc] = true
					df[term]++
				}
			}
		}
		docDF[lang] = df
	}
	var qs []Question
	for _, f := range strings.Split(os.Getenv("SETS"), ",") {
		q, _ := Load(f)
		qs = append(qs, q...)
	}
	for _, q := range qs {
		l := ix.Lang(q.Language)
		res, _ := svc.Lookup(context.Background(), retrieval.LookupRequest{Question: q.Question, Language: q.Language, TopK: 5})
		if res.Primary == nil {
			fmt.Printf("X %v 0 99 %s\n", q.Expect == "none", q.ID)
			continue
		}
		pi, _ := l.PassageOf(res.Primary.DocumentID, res.Primary.Source[strings.LastIndex(res.Primary.Source, "#")+1:])
		doc := l.Passages[pi].Doc
		minDF := 99
		for _, term := range l.Analyzer.Terms(q.Question) {
			inDoc := false
			lo, hi := l.DocPassages(doc)
			for i := lo; i < hi; i++ {
				if _, ok := l.Passages[i].Terms[term]; ok {
					inDoc = true
				}
			}
			if inDoc && docDF[q.Language][term] < minDF {
				minDF = docDF[q.Language][term]
			}
		}
		fmt.Printf("X %v %.2f %d %v %s\n", q.Expect == "none", res.Relevance.Coverage, minDF, res.Primary.DocumentID == q.Expect, q.ID)
	}
}
