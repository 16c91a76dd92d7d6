package knowledge

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A procedure may have several versions on file: <language>/<id>.md and any number of
// <language>/<id>@<version>.md, each with its own version and effective date. The version in
// force on a day is the one with the latest effective date on or before it; a version whose
// date lies ahead is never served, only announced (see NextVersion), and a procedure whose
// versions all lie ahead is not yet a procedure on that day. Days are ISO dates (YYYY-MM-DD),
// which order as strings; a day begins at midnight in the configured time zone (see Today).

// VersionSeparator separates a procedure's id from the version in a versioned file's name:
// "access-failure@1.5.md".
const VersionSeparator = "@"

// Today is the day of t in loc, as an ISO date: the day whose versions are in force at t.
func Today(t time.Time, loc *time.Location) string { return t.In(loc).Format(time.DateOnly) }

// AddDays is the ISO date n days after day (before it for a negative n); day must be valid.
func AddDays(day string, n int) string {
	t, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return day
	}
	return t.AddDate(0, 0, n).Format(time.DateOnly)
}

// fileIdentity splits a procedure file's name without ".md" into the id and the version it
// names: "access-failure@1.5" is ("access-failure", "1.5"), "access-failure" is
// ("access-failure", "").
func fileIdentity(name string) (id, version string) {
	id, version, _ = strings.Cut(name, VersionSeparator)
	return id, version
}

// unreadName says why a file of a language folder that the loader does not read (its name does
// not end in ".md") looks like a procedure or a version of one, "" when it does not: a name with
// a version separator, or one ending in ".md" in another case ("access-failure@1.5.MD").
func unreadName(name string) string {
	ext := path.Ext(name)
	switch {
	case strings.EqualFold(ext, ".md"):
		return fmt.Sprintf("%q is not read: procedure files end in \".md\" (lower case)", name)
	case strings.Contains(name, VersionSeparator):
		return fmt.Sprintf("%q is not read: a version of a procedure is a file <id>@<version>.md", name)
	}
	return ""
}

// badVersionName says what is wrong with a procedure file's name that holds a version separator
// but names no version ("access-failure@.md", "access-failure@v2.md"), "" when nothing is.
func badVersionName(name string) string {
	id, version := fileIdentity(strings.TrimSuffix(name, ".md"))
	if !strings.Contains(name, VersionSeparator) {
		return ""
	}
	if id == "" || !versionPattern.MatchString(version) {
		return fmt.Sprintf("%q does not name a version: a version of a procedure is a file <id>@<version>.md, "+
			"the version dotted numbers such as \"1.5\"", name)
	}
	return ""
}

// checkVersionTwins enforces that every language holds the same versions: a version on file in
// one language is on file in every other with the same effective date. The file without a twin
// is named (at its version's line), with the file the other language lacks; a procedure missing
// from a language altogether, or whose file failed to parse, and a file that broke a version rule
// (bad), are reported elsewhere already.
func (c *Corpus) checkVersionTwins(failedIDs map[string]bool, bad map[*Document]bool, root string) []error {
	var errs []error
	ids := map[string]bool{}
	for _, key := range sortedKeys(c.versions) {
		_, id, _ := strings.Cut(key, "/")
		ids[id] = true
	}
	for _, id := range sortedKeys(ids) {
		if failedIDs[id] {
			continue
		}
		for _, lang := range Languages {
			vs := c.versions[lang+"/"+id]
			if vs == nil {
				continue
			}
			for _, other := range Languages {
				ovs := c.versions[other+"/"+id]
				if other == lang || ovs == nil {
					continue
				}
				for _, d := range vs {
					twin := versionOf(ovs, d.Version)
					switch {
					case bad[d] || (twin != nil && bad[twin]):
					case twin == nil:
						missing := other + "/" + id + VersionSeparator + d.Version + ".md"
						if !strings.Contains(path.Base(d.Path), VersionSeparator) {
							missing = other + "/" + id + ".md (or " + missing + ")"
						}
						errs = append(errs, ruleError(shown(root, d), keyLine(d.Raw, "version"), "versions",
							"version %q of %s is on file in %q but not in %q: every language holds the same versions (add %s)",
							d.Version, id, lang, other, missing))
					case twin.EffectiveDate != d.EffectiveDate && slices.Index(Languages, lang) < slices.Index(Languages, other):
						errs = append(errs, ruleError(shown(root, twin), keyLine(twin.Raw, "effective_date"), "versions",
							"version %q takes effect on %s here but on %s in %q (%s): every language gives a version the same effective date",
							twin.Version, twin.EffectiveDate, d.EffectiveDate, lang, shown(root, d)))
					}
				}
			}
		}
	}
	return errs
}

// versionOf is the document of vs with the version, nil when there is none.
func versionOf(vs []*Document, version string) *Document {
	for _, d := range vs {
		if d.Version == version {
			return d
		}
	}
	return nil
}

// compareVersions orders dotted version numbers numerically: "1.10" after "1.9", "2" before
// "2.0"; both must match the version rule.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < min(len(as), len(bs)); i++ {
		x, _ := strconv.Atoi(as[i])
		y, _ := strconv.Atoi(bs[i])
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(as), len(bs))
}

// checkVersions sorts each procedure's versions by effective date and enforces the version
// rules: one version per effective date, each version once, and a later effective date carrying
// a higher version. A broken rule names the file that breaks it, once; bad holds those files.
func (c *Corpus) checkVersions(root string) (errs []error, bad map[*Document]bool) {
	bad = map[*Document]bool{}
	for _, key := range sortedKeys(c.versions) {
		vs := c.versions[key]
		slices.SortStableFunc(vs, func(a, b *Document) int {
			return cmp.Or(strings.Compare(a.EffectiveDate, b.EffectiveDate), compareVersions(a.Version, b.Version),
				strings.Compare(a.Path, b.Path))
		})
		// prev is the last version that broke no rule: a file in fault is reported once, and
		// the versions after it are compared with the one before it.
		prev := vs[0]
		for _, d := range vs[1:] {
			switch {
			case d.EffectiveDate == prev.EffectiveDate:
				errs = append(errs, ruleError(shown(root, d), keyLine(d.Raw, "effective_date"), "versions",
					"effective_date %s is also the date of %s: one version per effective date", d.EffectiveDate, shown(root, prev)))
				bad[d] = true
			case compareVersions(d.Version, prev.Version) <= 0:
				errs = append(errs, ruleError(shown(root, d), keyLine(d.Raw, "version"), "versions",
					"version %q takes effect on %s, after %q of %s (%s): a later effective date must carry a higher version",
					d.Version, d.EffectiveDate, prev.Version, shown(root, prev), prev.EffectiveDate))
				bad[d] = true
			default:
				prev = d
			}
		}
		seen := map[string]*Document{}
		for _, d := range vs {
			if first, ok := seen[d.Version]; ok && !bad[d] {
				errs = append(errs, ruleError(shown(root, d), keyLine(d.Raw, "version"), "versions",
					"version %q is also the version of %s", d.Version, shown(root, first)))
				bad[d] = true
			}
			seen[d.Version] = d
		}
	}
	return errs, bad
}

// shown is a document's file as the user knows it, under the corpus folder root.
func shown(root string, d *Document) string {
	return shownPath(root, strings.TrimPrefix(d.Path, "procedures/"))
}

// keyLine is the line of a top-level front-matter key in a procedure file, 1 when it is not
// found (the opening "---").
func keyLine(raw []byte, key string) int {
	for i, line := range strings.Split(string(raw), "\n") {
		if i > 0 && strings.TrimRight(line, "\r") == "---" {
			break
		}
		if strings.HasPrefix(line, key+":") {
			return i + 1
		}
	}
	return 1
}

// sortedOnce is each procedure's versions in the order of their keys, made once.
type sortedOnce struct {
	once     sync.Once
	versions [][]*Document
}

// sorted returns each procedure's versions (c.versions) in the order of their keys: made once
// for the corpus and every view of it (a zero Corpus makes them at every call).
func (c *Corpus) sorted() [][]*Document {
	k := c.keys
	if k == nil {
		k = new(sortedOnce)
	}
	k.once.Do(func() {
		for _, key := range sortedKeys(c.versions) {
			k.versions = append(k.versions, c.versions[key])
		}
	})
	return k.versions
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Versioned reports whether any procedure has more than one version on file, or a version
// whose file is named for it (<id>@<version>.md).
func (c *Corpus) Versioned() bool {
	for _, vs := range c.versions {
		if len(vs) > 1 || strings.Contains(vs[0].Path, VersionSeparator) {
			return true
		}
	}
	return false
}

// Versions returns every version on file of one procedure, oldest effective date first; nil
// when there is none. The slice must not be modified.
func (c *Corpus) Versions(lang, id string) []*Document { return c.versions[lang+"/"+id] }

// InForce returns the version of one procedure in force on day (an ISO date): the one with the
// latest effective date on or before it; nil when every version lies ahead, or there is none.
func (c *Corpus) InForce(lang, id, day string) *Document {
	return inForce(c.versions[lang+"/"+id], day)
}

func inForce(vs []*Document, day string) *Document {
	var cur *Document
	for _, d := range vs {
		if d.EffectiveDate > day {
			break
		}
		cur = d
	}
	return cur
}

// NextVersion returns the version of one procedure that takes effect next after day, when it
// does within days days (its effective date is after day and at most day+days); nil otherwise.
func (c *Corpus) NextVersion(lang, id, day string, days int) *Document {
	last := AddDays(day, days)
	for _, d := range c.versions[lang+"/"+id] {
		if d.EffectiveDate > day {
			if d.EffectiveDate <= last {
				return d
			}
			return nil
		}
	}
	return nil
}

// Day is the day whose versions in force the corpus's Documents are (see On); "" for a corpus
// as loaded, whose Documents are its <id>.md files.
func (c *Corpus) Day() string { return c.day }

// On returns the corpus as it stands on day (an ISO date): its Documents and Document are the
// versions in force that day, and a procedure whose versions all lie ahead is absent. Every
// version stays reachable through Versions, InForce and NextVersion. The view shares the
// documents, the synonyms and the fingerprint of c.
func (c *Corpus) On(day string) *Corpus {
	// A view names its documents by key through the versions (Document), not a map of its own:
	// a view is made for every set an audit asks for.
	v := &Corpus{byLang: map[string][]*Document{}, synonyms: c.synonyms,
		uncovered: c.uncovered, files: c.files, lazySynonyms: c.lazySynonyms,
		versions: c.versions, keys: c.keys, day: day}
	for _, vs := range c.sorted() {
		d := inForce(vs, day)
		if d == nil {
			continue
		}
		if v.byLang[d.Language] == nil {
			v.byLang[d.Language] = make([]*Document, 0, len(c.byLang[d.Language]))
		}
		v.byLang[d.Language] = append(v.byLang[d.Language], d)
	}
	return v
}

// All returns the corpus with every version on file as its Documents: each language's sorted by
// id, a procedure's versions oldest effective date first. It is what the index of every version
// is built from (lexical.BuildAll), and shares the documents, the synonyms and the fingerprint
// of c; Document names no version of it.
func (c *Corpus) All() *Corpus {
	v := &Corpus{byLang: map[string][]*Document{}, byKey: map[string]*Document{}, synonyms: c.synonyms,
		uncovered: c.uncovered, files: c.files, lazySynonyms: c.lazySynonyms, versions: c.versions, keys: c.keys}
	for _, vs := range c.sorted() {
		for _, d := range vs {
			v.byLang[d.Language] = append(v.byLang[d.Language], d)
		}
	}
	return v
}

// EffectiveDates are the distinct effective dates of every version on file, in order: the only
// days on which the set of versions in force changes.
func (c *Corpus) EffectiveDates() []string {
	var out []string
	for _, vs := range c.versions {
		for _, d := range vs {
			out = append(out, d.EffectiveDate)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// InForceKey names the set of versions in force on day: two days with the same key are served
// from the same documents. The set changes only on effective dates.
func (c *Corpus) InForceKey(day string) string {
	var b strings.Builder
	for _, vs := range c.sorted() {
		if d := inForce(vs, day); d != nil {
			b.WriteString(d.Path)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Key names the set of the corpus's Documents, as InForceKey does for a day.
func (c *Corpus) Key() string {
	if c.byKey == nil {
		return c.InForceKey(c.day)
	}
	var b strings.Builder
	for _, key := range sortedKeys(c.byKey) {
		b.WriteString(c.byKey[key].Path)
		b.WriteByte('\n')
	}
	return b.String()
}
