package mcp

import (
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// The text rendering announces a coming version as the structured content does, for clients that
// read only text, and the tool descriptions say what next_version asks of the model.
func TestTextAnnouncesTheNextVersion(t *testing.T) {
	next := &lookup.NextVersion{Version: "1.5", EffectiveDate: "2027-01-01"}
	primary := &lookup.EvidenceBlock{DocumentID: "access-failure", Version: "1.4", NextVersion: next}
	text := lookupText(lookup.Result{EvidenceState: port.StateGrounded, Primary: primary,
		EvidenceBlocks: []lookup.EvidenceBlock{*primary}})
	if !strings.Contains(text, "version 1.5 of access-failure takes effect on 2027-01-01") {
		t.Errorf("lookup text does not announce 1.5:\n%s", text)
	}
	primary.NextVersion = nil
	if text := lookupText(lookup.Result{EvidenceState: port.StateGrounded, Primary: primary}); strings.Contains(text, "Coming") {
		t.Errorf("lookup text announces a version none is coming:\n%s", text)
	}
	sources := []port.AnswerSource{{DocumentID: "access-failure", NextVersion: next}, {DocumentID: "access-failure", NextVersion: next},
		{DocumentID: "damage-procedure"}}
	if got := comingSourcesText(sources); strings.Count(got, "access-failure") != 1 || !strings.Contains(got, "2027-01-01") {
		t.Errorf("ask text: %q", got)
	}
	for _, d := range []string{lookupDescription, askDescription} {
		if !strings.Contains(d, "next_version") {
			t.Errorf("a tool description does not explain next_version: %s", d)
		}
	}
}
