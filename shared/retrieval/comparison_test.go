package retrieval

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// list builds ranked Comparables from identities "doc" or "doc#anchor", with scores of the given
// kind that fall with the rank.
func list(kind string, ids ...string) []port.Comparable {
	out := make([]port.Comparable, len(ids))
	for i, id := range ids {
		doc, anchor, _ := strings.Cut(id, "#")
		src := "procedures/en/" + doc + ".md"
		if anchor != "" {
			src += "#" + anchor
		}
		out[i] = port.Comparable{Source: src, DocumentID: doc, Rank: i + 1,
			Score: port.Score{Value: float64(len(ids) - i), Kind: kind, HigherIsBetter: true}}
	}
	return out
}

func ptr(v float64) *float64 { return &v }

func TestCompare(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		primary []port.Comparable
		side    []port.Comparable
		k       int
		want    lookup.Comparison
	}{
		{
			name: "identical", k: 3,
			primary: list("bm25", "a#1", "b#2", "c#3"), side: list(sidecarKind, "a#1", "b#2", "c#3"),
			want: lookup.Comparison{K: 3, OverlapAtK: 1, Shared: []string{"a#1", "b#2", "c#3"}, RankAgreement: ptr(1),
				OnlyPrimary: []string{}, OnlySidecar: []string{}},
		},
		{
			name: "reversed", k: 3,
			primary: list("bm25", "a#1", "b#2", "c#3"), side: list(sidecarKind, "c#3", "b#2", "a#1"),
			want: lookup.Comparison{K: 3, OverlapAtK: 1, Shared: []string{"a#1", "b#2", "c#3"}, RankAgreement: ptr(-1),
				OnlyPrimary: []string{}, OnlySidecar: []string{}},
		},
		{
			name: "disjoint", k: 2,
			primary: list("bm25", "a#1", "b#2"), side: list(sidecarKind, "x#1", "y#2"),
			want: lookup.Comparison{K: 2, OverlapAtK: 0, Shared: []string{}, RankAgreement: nil,
				OnlyPrimary: []string{"a#1", "b#2"}, OnlySidecar: []string{"x#1", "y#2"}},
		},
		{
			name: "partial overlap", k: 4,
			primary: list("bm25", "a#1", "b#2", "c#3", "d#4"), side: list(sidecarKind, "c#3", "a#1", "x#9", "b#2"),
			// shared in primary order a, b, c; sidecar positions 1, 3, 0: pairs (a,b)+ (a,c)- (b,c)- → tau -1/3
			want: lookup.Comparison{K: 4, OverlapAtK: 0.75, Shared: []string{"a#1", "b#2", "c#3"}, RankAgreement: ptr(-0.3333),
				OnlyPrimary: []string{"d#4"}, OnlySidecar: []string{"x#9"}},
		},
		{
			name: "one shared: no agreement", k: 3,
			primary: list("bm25", "a#1", "b#2"), side: list(sidecarKind, "b#2", "z#1"),
			want: lookup.Comparison{K: 3, OverlapAtK: 0.5, Shared: []string{"b#2"}, RankAgreement: nil,
				OnlyPrimary: []string{"a#1"}, OnlySidecar: []string{"z#1"}},
		},
		{
			name: "k cuts the lists", k: 2,
			primary: list("bm25", "a#1", "b#2", "c#3"), side: list(sidecarKind, "b#2", "a#1", "c#3"),
			want: lookup.Comparison{K: 2, OverlapAtK: 1, Shared: []string{"a#1", "b#2"}, RankAgreement: ptr(-1),
				OnlyPrimary: []string{}, OnlySidecar: []string{}},
		},
		{
			name: "shorter lists: denominator is the longer top-k", k: 5,
			primary: list("bm25", "a#1", "b#2", "c#3", "d#4"), side: list(sidecarKind, "a#1", "b#2"),
			want: lookup.Comparison{K: 5, OverlapAtK: 0.5, Shared: []string{"a#1", "b#2"}, RankAgreement: ptr(1),
				OnlyPrimary: []string{"c#3", "d#4"}, OnlySidecar: []string{}},
		},
		{
			name: "k below 1 compares whole lists", k: 0,
			primary: list("bm25", "a#1", "b#2", "c#3"), side: list(sidecarKind, "a#1"),
			want: lookup.Comparison{K: 3, OverlapAtK: 0.3333, Shared: []string{"a#1"},
				OnlyPrimary: []string{"b#2", "c#3"}, OnlySidecar: []string{}},
		},
		{
			name: "both empty", k: 5,
			want: lookup.Comparison{K: 5, Shared: []string{}, OnlyPrimary: []string{}, OnlySidecar: []string{}},
		},
		{
			name: "a side without sections compares documents", k: 3,
			primary: list("bm25", "a#1", "b#2", "a#3", "c#1"), side: list(sidecarKind, "b", "a", "c"),
			// primary at document level: a, b, c (the second a counts once, at its best rank)
			want: lookup.Comparison{K: 3, OverlapAtK: 1, Shared: []string{"a", "b", "c"}, RankAgreement: ptr(0.3333),
				OnlyPrimary: []string{}, OnlySidecar: []string{}},
		},
		{
			name: "same document, other section", k: 2,
			primary: list("bm25", "a#1", "b#2"), side: list(sidecarKind, "a#2", "b#2"),
			want: lookup.Comparison{K: 2, OverlapAtK: 0.5, Shared: []string{"b#2"},
				OnlyPrimary: []string{"a#1"}, OnlySidecar: []string{"a#2"}},
		},
		{
			name: "repeated chunks count once", k: 2,
			primary: list("bm25", "a#1", "b#2"), side: list(sidecarKind, "a#1", "a#1", "b#2"),
			want: lookup.Comparison{K: 2, OverlapAtK: 1, Shared: []string{"a#1", "b#2"}, RankAgreement: ptr(1),
				OnlyPrimary: []string{}, OnlySidecar: []string{}},
		},
		{
			name: "results without document id are identified by source", k: 3,
			primary: list("bm25", "a#1"),
			side: append(list(sidecarKind, "a#1"),
				port.Comparable{Source: "s3://kb/misc/notes.txt", Rank: 2}, port.Comparable{Rank: 3}),
			want: lookup.Comparison{K: 3, OverlapAtK: 0.5, Shared: []string{"a#1"},
				OnlyPrimary: []string{}, OnlySidecar: []string{"s3://kb/misc/notes.txt"}},
		},
		{
			name: "order is by rank, not by position", k: 3,
			primary: list("bm25", "a#1", "b#2", "c#3"),
			side: []port.Comparable{
				{Source: "procedures/en/c.md#3", DocumentID: "c", Rank: 3},
				{Source: "procedures/en/a.md#1", DocumentID: "a", Rank: 1},
				{Source: "procedures/en/b.md#2", DocumentID: "b", Rank: 2},
			},
			want: lookup.Comparison{K: 3, OverlapAtK: 1, Shared: []string{"a#1", "b#2", "c#3"}, RankAgreement: ptr(1),
				OnlyPrimary: []string{}, OnlySidecar: []string{}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.want.ScoreSemantics = map[string]string{"primary": "bm25", "sidecar": sidecarKind}
			got := Compare("bm25", tc.primary, sidecarKind, tc.side, tc.k)
			if !reflect.DeepEqual(got, tc.want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(tc.want)
				t.Errorf("\n got %s\nwant %s", g, w)
			}
		})
	}
}

// TestCompareIgnoresScores: any scores, of any kind or direction, give the same comparison.
func TestCompareIgnoresScores(t *testing.T) {
	t.Parallel()
	primary := list("bm25", "a#1", "b#2", "c#3", "d#4")
	side := list(sidecarKind, "c#3", "a#1", "x#9", "b#2")
	want := Compare("bm25", primary, sidecarKind, side, 4)

	scramble := func(in []port.Comparable, f func(i int, s port.Score) port.Score) []port.Comparable {
		out := make([]port.Comparable, len(in))
		for i, c := range in {
			c.Score = f(i, c.Score)
			out[i] = c
		}
		return out
	}
	variants := map[string]func(int, port.Score) port.Score{
		"inverted": func(i int, s port.Score) port.Score {
			return port.Score{Value: -s.Value, Kind: s.Kind, HigherIsBetter: false}
		},
		"rising":       func(i int, s port.Score) port.Score { return port.Score{Value: float64(i * 1000), Kind: s.Kind} },
		"equal":        func(int, port.Score) port.Score { return port.Score{Value: 0.5, Kind: "same"} },
		"zero":         func(int, port.Score) port.Score { return port.Score{} },
		"swapped kind": func(i int, s port.Score) port.Score { return port.Score{Value: s.Value, Kind: "cosine_similarity"} },
	}
	for name, f := range variants {
		got := Compare("bm25", scramble(primary, f), sidecarKind, scramble(side, f), 4)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s scores changed the comparison: %+v, want %+v", name, got, want)
		}
	}
}

func TestCompareJSON(t *testing.T) {
	t.Parallel()
	out, err := json.Marshal(Compare("", list("x", "a#1"), sidecarKind, nil, 3))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"k":3,"overlap_at_k":0,"shared":[],"rank_agreement":null,"only_primary":["a#1"],"only_sidecar":[],` +
		`"score_semantics":{"primary":"unknown","sidecar":"bedrock_relevance"}}`
	if string(out) != want {
		t.Errorf("\n got %s\nwant %s", out, want)
	}
}

func BenchmarkCompare(b *testing.B) {
	ids := make([]string, 20)
	for i := range ids {
		ids[i] = string(rune('a'+i)) + "#s"
	}
	primary := list("bm25", ids...)
	side := list(sidecarKind, append(ids[10:], ids[:10]...)...)
	b.ReportAllocs()
	for b.Loop() {
		Compare("bm25", primary, sidecarKind, side, 20)
	}
}

// sidecarKind is the Bedrock sidecar's score kind (sidecar.ScoreKind; the domain does not import
// the adapter).
const sidecarKind = "bedrock_relevance"
