package retrieval

import (
	"strings"
	"testing"
)

// A question's sentences are told apart at a question mark or a full stop before a space, not at
// a decimal point, and only those with MinPartWords specific words are kept, when two are; a
// question of one sentence has none.
func TestSentenceMasks(t *testing.T) {
	l := embeddedLang(t, "en")
	for _, tc := range []struct {
		q    string
		want int
	}{
		{"Customer's tyre burst on the motorway, do we pay a taxi? Also a phone was found in a car, how long do we keep it?", 2},
		{"Windscreen chip of 2.5 cm found by the customer before the trip, can the car stay bookable?", 0},
		{"Windscreen chip found before the trip. Can it stay bookable?", 0}, // the second has one
		{"Windscreen chip found before the trip. A phone was left in another car, how long do we keep it?", 2},
		{"Windscreen chip found before the trip, can the car stay bookable?", 0},
	} {
		q := analyseQuestion(l, tc.q)
		var buf [maxSentences]uint64
		got := sentenceMasks(q, buf[:0])
		if len(got) != tc.want {
			t.Errorf("%q: %d sentences of specific words, want %d", tc.q, len(got), tc.want)
		}
		for i := range got {
			for k := range i {
				if got[i] == got[k] {
					t.Errorf("%q: sentences %d and %d hold the same words", tc.q, k, i)
				}
			}
		}
		q.release()
	}

	// A question of many sentences keeps at most maxSentences of them.
	long := strings.Repeat("Phone found in the car, how long do we keep it? Tyre burst on the motorway, who pays the taxi? ", 20)
	q := analyseQuestion(l, long)
	defer q.release()
	var buf [maxSentences]uint64
	if got := sentenceMasks(q, buf[:0]); len(got) != maxSentences {
		t.Errorf("a question of 40 sentences keeps %d, want %d", len(got), maxSentences)
	}
}
