package wire

import (
	"fmt"
	"slices"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

// maxLoggedVersions bounds each list of versions the start log names: a large corpus with many
// versions on file names the first ones and how many more there are.
const maxLoggedVersions = 20

// knowledgeAttrs are the start log's account of the corpus on the day the function starts, the
// same for every function and transport (the Lambda runtime, its emulator, make local): the day
// and the zone it was computed for, the procedures in force per language, and, for procedures
// with more than one version on file or a version file (<id>@<version>.md), the version in force
// and each version still to come with its date. Every language holds the same versions (the
// corpus is refused otherwise), so the first language's name them.
func knowledgeAttrs(c *knowledge.Corpus, day, zone string) []any {
	on := c.On(day)
	attrs := []any{"day", day, "time_zone", zone}
	for _, lang := range knowledge.Languages {
		attrs = append(attrs, "procedures_in_force_"+lang, len(on.Documents(lang)))
	}
	lang := knowledge.Languages[0]
	var inForce, coming []string
	files := 0
	for _, d := range c.All().Documents(lang) {
		files++
		vs := c.Versions(lang, d.ID)
		if len(vs) < 2 && !strings.Contains(d.Path, knowledge.VersionSeparator) {
			continue
		}
		switch cur := c.InForce(lang, d.ID, day); {
		case d.EffectiveDate > day:
			coming = append(coming, fmt.Sprintf("%s %s on %s", d.ID, d.Version, d.EffectiveDate))
		case cur == d:
			inForce = append(inForce, fmt.Sprintf("%s %s since %s", d.ID, d.Version, d.EffectiveDate))
		}
	}
	slices.Sort(inForce)
	slices.SortFunc(coming, func(a, b string) int { return strings.Compare(dateOf(a), dateOf(b)) })
	return append(attrs, "version_files_"+lang, files, "versions_in_force", bounded(inForce),
		"versions_coming", bounded(coming))
}

// dateOf is the date ending an entry of versions_coming, for ordering it.
func dateOf(entry string) string { return entry[strings.LastIndexByte(entry, ' ')+1:] }

// bounded is list cut to maxLoggedVersions entries, the last saying how many more there are;
// an empty list, not null, when there is none.
func bounded(list []string) []string {
	if list == nil {
		return []string{}
	}
	if len(list) <= maxLoggedVersions {
		return list
	}
	return append(list[:maxLoggedVersions:maxLoggedVersions], fmt.Sprintf("… and %d more", len(list)-maxLoggedVersions))
}
