package retrieval

import (
	"slices"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
)

// view builds a path's ranking from procedure scores, as views would.
func view(scores ...any) pathView {
	var v pathView
	for i := 0; i+1 < len(scores); i += 2 {
		v.add(scores[i].(string), scores[i+1].(float64), "procedures/en/"+scores[i].(string)+".md#1")
	}
	v.sort()
	return v
}

// tableViews are the views of the service's evidence paths (evidencePaths) made of views given
// in the table's order; a path not given ranks nothing.
func tableViews(views ...pathView) *pathViews {
	v := newPathViews(evidencePaths[:])
	copy(v.list, views)
	return v
}

// Every branch of the verdict's weighing of the evidence paths (docs/retrieval.md, "Evidence
// state"), for the primary block's procedure "a".
func TestWeighBranches(t *testing.T) {
	s := &Service{opts: DefaultOptions()}
	none := pathView{}
	for _, tc := range []struct {
		name            string
		sem, lex, front pathView
		grounded        bool
		why             string
		alternatives    map[string][]string // document id -> favoured_by
	}{
		{name: "the semantic path prefers another procedure",
			sem: view("b", 0.79, "a", 0.77), lex: view("a", 5.0, "b", 2.0), front: view("a", 3.0),
			why: "the semantic search ranks b above a", alternatives: map[string][]string{"b": {PathSemantic}}},
		{name: "the semantic path prefers another by a tie, every other path decisive",
			sem: view("b", 0.775, "a", 0.77), lex: view("a", 5.0, "b", 2.0), front: view("a", 3.0),
			grounded: true, why: "the semantic search ranks b above a only by a tie, and every other path is decisive for a"},
		{name: "a semantic tie, the front matter without an opinion",
			sem: view("b", 0.775, "a", 0.77), lex: view("a", 5.0, "b", 2.0), front: view("a", 0.5),
			why: "the semantic search ranks b above a", alternatives: map[string][]string{"b": {PathSemantic}}},
		{name: "a semantic tie, the lexical path not decisive",
			sem: view("b", 0.775, "a", 0.77), lex: view("a", 5.0, "b", 4.5), front: view("a", 3.0),
			why: "the semantic search ranks b above a", alternatives: map[string][]string{"b": {PathSemantic, PathLexical}}},
		{name: "every path agrees, the lexical path is decisive",
			sem: view("a", 0.78, "b", 0.77), lex: view("a", 5.0, "b", 2.0), front: view("a", 3.0, "b", 2.9),
			grounded: true},
		{name: "every path agrees, the front matter is decisive",
			sem: view("a", 0.78, "b", 0.77), lex: view("a", 5.0, "b", 4.5), front: view("a", 3.0, "b", 1.0),
			grounded: true},
		{name: "every path agrees, none is decisive",
			sem: view("a", 0.78, "b", 0.77), lex: view("a", 5.0, "c", 4.5), front: view("a", 3.0, "b", 2.9),
			why:          "no path tells it apart from b",
			alternatives: map[string][]string{"b": {PathSemantic, PathFrontMatter}, "c": {PathLexical}}},
		{name: "the lexical path prefers another, the semantic margin is not decisive",
			sem: view("a", 0.78, "b", 0.75), lex: view("b", 5.0, "a", 4.0), front: none,
			why: "the lexical search ranks first b rather than a", alternatives: map[string][]string{"b": {PathSemantic, PathLexical}}},
		{name: "the lexical path prefers another, overruled by a decisive semantic margin",
			sem: view("a", 0.82, "b", 0.70), lex: view("b", 5.0, "a", 4.0), front: none,
			grounded: true, why: "the semantic margin is decisive over the lexical search ranks first b"},
		{name: "a decisive semantic margin, but the lexical path hardly knows the procedure",
			sem: view("a", 0.82, "b", 0.70), lex: view("b", 5.0, "a", 1.0), front: none,
			why: "the lexical search ranks first b rather than a", alternatives: map[string][]string{"b": {PathLexical}}},
		{name: "the front matter names another, the semantic margin is not decisive",
			sem: view("a", 0.78, "b", 0.76), lex: view("a", 5.0, "b", 2.0), front: view("b", 3.0, "a", 1.0),
			why: "the front matter names b rather than a", alternatives: map[string][]string{"b": {PathSemantic, PathFrontMatter}}},
		{name: "front matter below its minimum weight has no opinion",
			sem: view("a", 0.78, "b", 0.77), lex: view("a", 5.0, "b", 2.0), front: view("b", 0.9),
			grounded: true},
		{name: "no path has an opinion",
			sem: none, lex: none, front: view("b", 0.5), why: "no evidence path ranks it first"},
		{name: "lexical only: the lexical path decisive",
			sem: none, lex: view("a", 5.0, "b", 3.0), front: view("a", 2.0, "b", 1.5), grounded: true},
		{name: "lexical only: the lexical path decisive, the front matter names another about as much",
			sem: none, lex: view("a", 5.0, "b", 3.0), front: view("a", 2.0, "b", 1.9),
			why:          "the front matter names b about as much, and the sections' words alone do not choose between them",
			alternatives: map[string][]string{"b": {PathFrontMatter}}},
		{name: "with the semantic path: the lexical path decisive, the front matter names another about as much",
			sem: view("a", 0.78, "b", 0.77), lex: view("a", 5.0, "b", 3.0), front: view("a", 2.0, "b", 1.9), grounded: true},
		{name: "lexical only: the runner-up close on the lexical path, the front matter decisive",
			sem: none, lex: view("a", 5.0, "b", 4.5), front: view("a", 3.0, "b", 1.0),
			why:          "the lexical search does not tell it apart from b, and the front matter alone does not decide",
			alternatives: map[string][]string{"b": {PathLexical}}},
		{name: "with the semantic path: the runner-up close on the lexical path, the front matter decisive",
			sem: view("a", 0.78, "b", 0.77), lex: view("a", 5.0, "b", 4.5), front: view("a", 3.0, "b", 1.0),
			grounded: true},
		{name: "lexical only: the runner-up close on every path",
			sem: none, lex: view("a", 5.0, "b", 4.5), front: view("a", 3.0, "b", 2.8),
			why: "no path tells it apart from b", alternatives: map[string][]string{"b": {PathLexical, PathFrontMatter}}},
		{name: "lexical only: the runner-up close, no front matter",
			sem: none, lex: view("a", 5.0, "b", 4.5), front: none,
			why: "no path tells it apart from b", alternatives: map[string][]string{"b": {PathLexical}}},
		{name: "lexical only: the front matter names another",
			sem: none, lex: view("a", 5.0, "b", 2.0), front: view("b", 3.0, "a", 2.0),
			why: "the front matter names b rather than a", alternatives: map[string][]string{"b": {PathFrontMatter}}},
		{name: "lexical only: the lexical path prefers another",
			sem: none, lex: view("b", 5.0, "a", 4.0), front: view("a", 3.0),
			why: "the lexical search ranks first b rather than a", alternatives: map[string][]string{"b": {PathLexical}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tableViews(tc.sem, tc.lex, tc.front)
			why, ok := s.weigh("a", v)
			if ok != tc.grounded || !strings.Contains(why, tc.why) {
				t.Errorf("weigh = %q, %v; want %v with %q", why, ok, tc.grounded, tc.why)
			}
			alts := s.alternatives(nil, "a", v, []ranked{{EvidenceBlock: &lookup.EvidenceBlock{DocumentID: "b", Title: "B", Source: "procedures/en/b.md#2"}}})
			if tc.grounded && len(alts) > 0 && tc.alternatives == nil {
				// A grounded verdict carries no alternatives (assess drops them); the paths may
				// still name a runner-up.
				alts = nil
			}
			got := map[string][]string{}
			for _, a := range alts {
				got[a.DocumentID] = a.FavouredBy
				if a.DocumentID == "b" && (a.Source != "procedures/en/b.md#2" || a.Title != "B") {
					t.Errorf("alternative b comes from the blocks: %+v", a)
				}
				if a.DocumentID != "b" && a.Source != "procedures/en/"+a.DocumentID+".md#1" {
					t.Errorf("alternative %s comes from its path: %+v", a.DocumentID, a)
				}
			}
			if len(got) != len(tc.alternatives) {
				t.Fatalf("alternatives %v, want %v", got, tc.alternatives)
			}
			for id, by := range tc.alternatives {
				if !slices.Equal(got[id], by) {
					t.Errorf("alternative %s favoured by %v, want %v", id, got[id], by)
				}
			}
		})
	}
}
