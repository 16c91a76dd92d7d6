package retrieval

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

func TestExcerptCutsAroundTheMatchedSentences(t *testing.T) {
	l := embeddedLang(t, "en")
	filler := strings.Repeat("The agent keeps the ticket up to date and writes every step down. ", 12)
	content := filler + "\n- A taxi is approved up to 50 EUR when the customer must reach the airport.\n- The receipt is uploaded in the app.\n" + filler
	q := "how much taxi money for the airport?"
	got := excerpt(l, l.Analyzer.QuestionWords(q), 0, content, 200)
	if !strings.Contains(got, "A taxi is approved up to 50 EUR") {
		t.Fatalf("excerpt %q lacks the matched sentence", got)
	}
	// It begins at the matched sentence's beginning, unmarked; the cut end is marked.
	if strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") || utf8.RuneCountInString(got) > 202 {
		t.Errorf("excerpt %q: not beginning at a sentence, its end not marked as cut, or too long", got)
	}
	for _, run := range strings.Split(got, "…") {
		if run = strings.TrimSpace(run); !strings.Contains(content, run) {
			t.Errorf("run %q is not verbatim", run)
		}
	}
	// The sentence after a match comes with it: it often holds the consequence.
	if !strings.Contains(got, "The receipt is uploaded in the app.") {
		t.Errorf("excerpt %q lacks the sentence after the match", got)
	}
	// Nothing matches: the beginning.
	if got := excerpt(l, l.Analyzer.QuestionWords("xylophone"), 0, content, 200); !strings.HasPrefix(content, strings.TrimSuffix(got, "…")) {
		t.Errorf("unmatched excerpt %q is not the beginning", got)
	}
	// Short content is whole.
	if got := excerpt(l, l.Analyzer.QuestionWords(q), 0, "Short.", 200); got != "Short." {
		t.Errorf("short content %q", got)
	}
}

// A sentence holding the kind of fact asked is quoted although it shares no word with the
// question, ahead of sentences that share one.
func TestExcerptPrefersTheKindOfFactAsked(t *testing.T) {
	l := embeddedLang(t, "en")
	filler := strings.Repeat("The agent keeps the ticket for the status update up to date. ", 10)
	fact := "A new status message goes out every 60 minutes until the case is closed."
	content := filler + fact + " " + filler
	q := "how often do we send a status update"
	if got := excerpt(l, l.Analyzer.QuestionWords(q), textproc.QuestionKinds(q), content, 200); !strings.Contains(got, fact) {
		t.Errorf("excerpt %q lacks %q", got, fact)
	}
	if got := excerpt(l, l.Analyzer.QuestionWords(q), 0, content, 200); strings.Contains(got, fact) {
		t.Errorf("without the kind the excerpt %q holds the fact: the test shows nothing", got)
	}
}
