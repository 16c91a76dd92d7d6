package mcp

import (
	"fmt"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// nextVersionDoc tells a model what next_version means, in the tools' descriptions.
const nextVersionDoc = " A block or source whose procedure has a new version taking effect soon carries next_version " +
	"(version, effective_date): warn that the rule changes on that day; lookup with as_of set to that date shows " +
	"what will apply from then."

// comingText is the text rendering's line for a coming version of the primary block's procedure,
// "" when none is announced.
func comingText(b *lookup.EvidenceBlock) string {
	if b == nil || b.NextVersion == nil {
		return ""
	}
	return fmt.Sprintf("\nComing: version %s of %s takes effect on %s; warn that this rule changes then.",
		b.NextVersion.Version, b.DocumentID, b.NextVersion.EffectiveDate)
}

// comingSourcesText is the text rendering's line for the coming versions of an answer's cited
// procedures, each once; "" when none is announced.
func comingSourcesText(sources []port.AnswerSource) string {
	var parts []string
	seen := map[string]bool{}
	for _, s := range sources {
		if s.NextVersion == nil || seen[s.DocumentID] {
			continue
		}
		seen[s.DocumentID] = true
		parts = append(parts, fmt.Sprintf("version %s of %s takes effect on %s", s.NextVersion.Version, s.DocumentID,
			s.NextVersion.EffectiveDate))
	}
	if len(parts) == 0 {
		return ""
	}
	return "\nComing: " + strings.Join(parts, "; ") + "; warn that these rules change then."
}
