// Package knowledge holds Northstar Mobility's authoritative procedures: the embedded Markdown
// files under procedures/<language>/<id>.md, the loader that parses them, and the rules of the
// corpus contract that every file must satisfy before it can reach a running function. Beside
// them, synonyms/<language>/*.txt are the synonym files that map operators' words onto the
// procedures' words (see package synonyms), and synonyms/<language>/uncovered.txt names the
// topics the procedures do not cover (see Corpus.Uncovered).
package knowledge

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/synonyms"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

//go:embed procedures synonyms
var embedded embed.FS

// embeddedIndex is the prebuilt index of the embedded corpus (see lexical.Encode), made by
// `go generate ./knowledge` whenever a procedure or synonym file changes; a test fails while it
// is stale, and a stale one is never loaded: every cold start compares the embedded files'
// fingerprint with the one the index names (Restore), and parses the files when they differ.
//
//go:generate go run ../cmd/index-build -out index.bin
//go:embed index.bin
var embeddedIndex []byte

// EmbeddedIndex returns the prebuilt index of the embedded corpus. The bytes must not be modified:
// the index loaded from them (lexical.Load with LoadOptions.Static) refers into them.
func EmbeddedIndex() []byte { return embeddedIndex }

// SynonymsDir is the folder of the synonym files, beside the language folders of KNOWLEDGE_DIR
// and beside procedures/ in the embedded corpus.
const SynonymsDir = "synonyms"

// UncoveredFile is the file of a language's synonym folder that names the topics its procedures
// do not cover (pricing, hiring, the fleet's insurance contract...), each rule mapping the terms
// of one topic onto the topic's name: "per minute, tariff => pricing". It is in the synonym
// format but holds no synonyms: its rules never expand a question (see Corpus.Uncovered).
const UncoveredFile = "uncovered.txt"

// Languages are the corpus languages, in the order they are reported: the languages the
// analysis supports (textproc.Languages, the one list).
var Languages = textproc.Languages

// Document is one procedure in one language.
type Document struct {
	ID            string
	Title         string
	Version       string
	EffectiveDate string
	Language      string
	Category      string
	Keywords      []string
	Entities      []string
	Owner         string
	// Path is the file's path relative to the corpus root, e.g. "procedures/en/damage-procedure.md".
	Path     string
	Sections []Section
	// SHA256 is the hex hash of the raw file, for change detection in manifest sync.
	SHA256 string
	// Raw is the file as stored.
	Raw []byte
}

// Section is one numbered "## N. Name" section: the unit of evidence.
type Section struct {
	Number  int
	Heading string // "2. Immediate actions"
	Anchor  string // "2-immediate-actions"
	Content string // the section body, verbatim and trimmed
}

// Source is the evidence source of a section: "procedures/<language>/<id>.md#<anchor>".
func (d *Document) Source(s *Section) string { return SectionSource(d.Path, s.Anchor) }

// Breadcrumb is "Title > Section".
func (d *Document) Breadcrumb(s *Section) string { return Breadcrumb(d.Title, s.Heading) }

// DocumentPath is a procedure's path in the corpus: "procedures/<language>/<id>.md".
func DocumentPath(lang, id string) string { return "procedures/" + lang + "/" + id + ".md" }

// SectionSource is the evidence source of the section at anchor of the document at path:
// "<path>#<anchor>".
func SectionSource(path, anchor string) string { return path + "#" + anchor }

// Breadcrumb is "Title > Section", or the one of the two that is not empty.
func Breadcrumb(title, section string) string {
	switch {
	case title == "":
		return section
	case section == "":
		return title
	}
	return title + " > " + section
}

// Corpus is the loaded, validated set of procedures. It is read-only after Load.
type Corpus struct {
	// byLang and byKey are the corpus's Documents: its <id>.md files as loaded, the versions in
	// force on day in a view made by On (whose byKey is nil: see Document).
	byLang map[string][]*Document
	byKey  map[string]*Document
	// versions holds every version on file of each procedure, keyed by "<language>/<id>",
	// oldest effective date first.
	versions map[string][]*Document
	// keys are the versions in the order of their keys, once asked for (sorted): the corpus is
	// read-only after Load, and every day's view (On) walks them.
	keys     *sortedOnce
	day      string
	synonyms map[string]*synonyms.Set
	// uncovered holds each language's UncoveredFile rules.
	uncovered map[string]*synonyms.Set
	// files maps every source file (procedures/<language>/<id>.md, synonyms/<language>/*.txt)
	// to the hex SHA-256 of its bytes.
	files map[string]string
	// lazySynonyms parses the synonym files on first use, for a restored corpus (see Restore):
	// the synonyms and the uncovered topics.
	lazySynonyms func() (syns, uncovered map[string]*synonyms.Set)
}

// Documents returns the procedures of one language, sorted by id: the versions in force on Day
// for a view made by On, the <id>.md files of a corpus as loaded. The slice must not be modified.
func (c *Corpus) Documents(lang string) []*Document { return c.byLang[lang] }

// Document returns one procedure, or nil: in a view made by On, its version in force on Day.
func (c *Corpus) Document(lang, id string) *Document {
	if c.byKey == nil {
		return inForce(c.versions[lang+"/"+id], c.day)
	}
	return c.byKey[lang+"/"+id]
}

// Synonyms returns the rules of every synonym file of one language, in file-name order; the set
// is empty, not nil, when the language has none.
func (c *Corpus) Synonyms(lang string) *synonyms.Set {
	syns, _ := c.sets()
	return orEmpty(syns[lang])
}

// Uncovered returns the rules of a language's UncoveredFile: terms that name a topic the
// procedures do not cover, each mapped onto the topic. A question about such a topic is not
// answered by a procedure that never uses the term, however many other words they share. The
// set is empty, not nil, when the language has no such file.
func (c *Corpus) Uncovered(lang string) *synonyms.Set {
	_, unc := c.sets()
	return orEmpty(unc[lang])
}

// sets returns the synonyms and the uncovered topics of every language, parsed now for a
// restored corpus.
func (c *Corpus) sets() (syns, uncovered map[string]*synonyms.Set) {
	if c.lazySynonyms != nil {
		return c.lazySynonyms()
	}
	return c.synonyms, c.uncovered
}

func orEmpty(s *synonyms.Set) *synonyms.Set {
	if s == nil {
		return &synonyms.Set{}
	}
	return s
}

// Embedded loads the procedures compiled into the binary. It checks every rule except the
// personal-data scan, which TestEmbeddedCorpusPassesEveryRule runs on these same files before
// they can be built: the scan is most of the parsing time (8 of 9 ms for 22 files), and its
// result for bytes fixed at build time cannot change at a cold start.
func Embedded() (*Corpus, error) {
	procs, syns, err := EmbeddedSources()
	if err != nil {
		return nil, err
	}
	return LoadSources(procs, syns)
}

// LoadSources loads the procedures of procs (<language>/<id>.md) and the synonym files of syns
// (<language>/*.txt; nil for none) as Embedded loads the embedded ones: every rule except the
// personal-data scan. It is for files compiled into the binary, whose scan the tests ran.
// Errors name the files under knowledge/, where the embedded ones are edited.
func LoadSources(procs, syns fs.FS) (*Corpus, error) {
	return load(procs, syns, "knowledge/procedures", "knowledge/"+SynonymsDir, false)
}

// LoadDir loads procedures from a folder laid out as <language>/<id>.md (KNOWLEDGE_DIR), and
// the synonym files of synonyms/<language>/*.txt when that folder is present.
func LoadDir(dir string) (*Corpus, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("knowledge dir: %w", err)
	}
	fsys := os.DirFS(dir)
	syns, err := synonymsOf(fsys)
	if err != nil {
		return nil, err
	}
	return load(fsys, syns, dir, filepath.Join(dir, SynonymsDir), true)
}

// Load reads every <language>/<id>.md file of fsys and checks the corpus rules, and parses every
// synonyms/<language>/*.txt file when fsys has a synonyms folder. It reports every broken rule
// and invalid synonym line it finds once, as a *RuleError naming the file by its path in fsys
// and the line, joined into one error.
func Load(fsys fs.FS) (*Corpus, error) {
	syns, err := synonymsOf(fsys)
	if err != nil {
		return nil, err
	}
	return load(fsys, syns, "", SynonymsDir, true)
}

// synonymsOf returns the synonyms folder of a corpus folder, nil when it has none.
func synonymsOf(fsys fs.FS) (fs.FS, error) {
	if fi, err := fs.Stat(fsys, SynonymsDir); err != nil || !fi.IsDir() {
		return nil, nil
	}
	return fs.Sub(fsys, SynonymsDir)
}

// shownPath is the path of name (slash-separated, in a corpus folder) as the user gave the
// folder, root ("" for the folder itself).
func shownPath(root, name string) string {
	if root == "" {
		return name
	}
	return filepath.Join(root, filepath.FromSlash(name))
}

// load reads the procedures of fsys and the synonym files of syns (nil for none); errors show
// their files under procRoot and synRoot, the folders as the user knows them.
func load(fsys, syns fs.FS, procRoot, synRoot string, scanPersonalData bool) (*Corpus, error) {
	c := newCorpus()
	var errs []error
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read corpus root: %w", err)
	}
	// failedIDs and failedLangs hold the ids of the files that failed to parse, in any language,
	// and their languages: the checks across languages say nothing more about them.
	failedIDs, failedLangs := map[string]bool{}, map[string]bool{}
	categoryLine := map[*Document]int{}
	badFolder := false
	for _, e := range entries {
		if !e.IsDir() || e.Name() == SynonymsDir {
			continue
		}
		if !slices.Contains(Languages, e.Name()) {
			parent, err := folderError(fsys, procRoot, e.Name())
			if parent { // the folder's other folders need no word more
				return nil, err
			}
			errs = append(errs, err)
			badFolder = true
			continue
		}
		files, err := fs.ReadDir(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", e.Name(), err)
		}
		for _, f := range files {
			name := path.Join(e.Name(), f.Name())
			if f.IsDir() {
				continue
			}
			if !strings.HasSuffix(f.Name(), ".md") {
				// A file that looks like a procedure or a version of one but is not read
				// ("access-failure@1.5.MD") would silently leave a language without it.
				if msg := unreadName(f.Name()); msg != "" {
					errs = append(errs, ruleError(shownPath(procRoot, name), 0, "file-name", "%s", msg))
				}
				continue
			}
			if msg := badVersionName(f.Name()); msg != "" {
				errs = append(errs, ruleError(shownPath(procRoot, name), 0, "file-name", "%s", msg))
				id, _ := fileIdentity(strings.TrimSuffix(f.Name(), ".md"))
				failedIDs[id], failedLangs[e.Name()] = true, true
				continue
			}
			raw, err := fs.ReadFile(fsys, name)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", name, err)
			}
			doc, catLine, err := parse("procedures/"+name, shownPath(procRoot, name), raw, scanPersonalData)
			if err != nil {
				errs = append(errs, err)
				id, _ := fileIdentity(strings.TrimSuffix(f.Name(), ".md"))
				failedIDs[id], failedLangs[e.Name()] = true, true
				continue
			}
			c.files[doc.Path] = doc.SHA256 // parse hashed the file once already
			categoryLine[doc] = catLine
			c.add(doc)
		}
	}
	versionErrs, badVersions := c.checkVersions(procRoot)
	errs = append(errs, versionErrs...)
	errs = append(errs, c.checkAcrossLanguages(failedIDs, failedLangs, categoryLine, procRoot, badFolder)...)
	errs = append(errs, c.checkVersionTwins(failedIDs, badVersions, procRoot)...)
	if syns != nil {
		errs = append(errs, c.loadSynonyms(syns, synRoot)...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

func newCorpus() *Corpus {
	return &Corpus{byLang: map[string][]*Document{}, byKey: map[string]*Document{}, versions: map[string][]*Document{},
		keys: new(sortedOnce), synonyms: map[string]*synonyms.Set{}, uncovered: map[string]*synonyms.Set{}, files: map[string]string{}}
}

// add files a loaded document: among the versions of its procedure, and among the Documents
// when it is the procedure's <id>.md file.
func (c *Corpus) add(d *Document) {
	key := d.Language + "/" + d.ID
	c.versions[key] = append(c.versions[key], d)
	if !strings.Contains(path.Base(d.Path), VersionSeparator) {
		c.byLang[d.Language] = append(c.byLang[d.Language], d)
		c.byKey[key] = d
	}
}

// Fingerprint is the hex SHA-256 of the corpus's source files: every procedure and synonym
// file's path and hash, in path order. Two corpora with the same fingerprint have the same
// bytes; a prebuilt index names the fingerprint it was built from.
func (c *Corpus) Fingerprint() string { return fingerprint(c.files) }

func fingerprint(files map[string]string) string {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	h := sha256.New()
	for _, p := range paths {
		fmt.Fprintf(h, "%s\x00%s\n", p, files[p])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// loadSynonyms parses every <language>/*.txt file of fsys, in file-name order, into one set per
// language. Errors show the files under root, the synonyms folder as the user knows it.
func (c *Corpus) loadSynonyms(fsys fs.FS, root string) []error {
	var errs []error
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return []error{fmt.Errorf("read %s: %w", SynonymsDir, err)}
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if !slices.Contains(Languages, e.Name()) {
			errs = append(errs, ruleError(shownPath(root, e.Name()), 0, "language", "folder %q is not a supported language: the synonyms folder holds one folder per language (%s)",
				e.Name(), strings.Join(Languages, ", ")))
			continue
		}
		files, err := fs.ReadDir(fsys, e.Name())
		if err != nil {
			return append(errs, fmt.Errorf("read %s/%s: %w", SynonymsDir, e.Name(), err))
		}
		var sets []*synonyms.Set
		for _, f := range files {
			if f.IsDir() || !strings.HasSuffix(f.Name(), ".txt") {
				continue
			}
			name := path.Join(e.Name(), f.Name())
			raw, err := fs.ReadFile(fsys, name)
			if err != nil {
				return append(errs, fmt.Errorf("read %s/%s: %w", SynonymsDir, name, err))
			}
			c.files[SynonymsDir+"/"+name] = hash(raw)
			// The rules' sources name the file in the corpus (synonyms/<language>/<file>:<line>).
			s, err := synonyms.Parse(SynonymsDir+"/"+name, bytes.NewReader(raw))
			if err != nil {
				errs = append(errs, synonymErrors(err, shownPath(root, name))...)
				continue
			}
			if f.Name() == UncoveredFile {
				if uerrs := checkUncovered(s, shownPath(root, name)); len(uerrs) > 0 {
					errs = append(errs, uerrs...)
					continue
				}
				c.uncovered[e.Name()] = s
				continue
			}
			sets = append(sets, s)
		}
		c.synonyms[e.Name()] = synonyms.Merge(sets...)
	}
	return errs
}

// synonymErrors makes the errors of synonyms.Parse RuleErrors of the rule "synonyms" in the file
// shown.
func synonymErrors(err error, shown string) []error {
	var out []error
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var se *synonyms.Error
		if errors.As(err, &se) {
			out = append(out, ruleError(shown, se.Line, "synonyms", "%s", se.Msg))
			return
		}
		out = append(out, ruleError(shown, 0, "synonyms", "%v", err))
	}
	walk(err)
	return out
}

// checkUncovered requires every rule of an UncoveredFile to map its terms onto one topic name of
// lower-case letters and hyphens ("fleet-purchasing"), so that a topic is never taken for a word
// of the procedures. Errors name the file shown.
func checkUncovered(s *synonyms.Set, shown string) []error {
	var errs []error
	for _, r := range s.Rules() {
		_, line, _ := strings.Cut(r.Source, ":")
		n, _ := strconv.Atoi(line)
		switch {
		case !r.Mapping():
			errs = append(errs, ruleError(shown, n, "uncovered", `an uncovered topic's rule maps terms onto the topic: "term, term => topic"`))
		case len(r.Targets) != 1 || !topicName(r.Targets[0]):
			errs = append(errs, ruleError(shown, n, "uncovered", "the topic must be one name of lower-case letters and hyphens, not %q", strings.Join(r.Targets, ", ")))
		}
	}
	return errs
}

func topicName(t string) bool {
	if t == "" || t[0] == '-' || t[len(t)-1] == '-' {
		return false
	}
	for _, r := range t {
		if (r < 'a' || r > 'z') && r != '-' {
			return false
		}
	}
	return true
}

// folderError is the error of a folder of the corpus root that is not a language: the folder
// that holds the corpus folder's language folders when it does (index-build -dir knowledge
// instead of knowledge/procedures), reported alone (parent).
func folderError(fsys fs.FS, root, name string) (parent bool, err error) {
	var holds []string
	for _, lang := range Languages {
		if fi, err := fs.Stat(fsys, name+"/"+lang); err == nil && fi.IsDir() {
			holds = append(holds, lang+"/")
		}
	}
	if len(holds) > 0 {
		return true, ruleError(shownPath(root, name), 0, "language", "this folder holds the language folders (%s): use it as the corpus folder (KNOWLEDGE_DIR, index-build -dir), not its parent",
			strings.Join(holds, ", "))
	}
	return false, ruleError(shownPath(root, name), 0, "language", "folder %q is not a supported language: the corpus folder holds one folder per language (%s) and optionally %s/",
		name, strings.Join(Languages, ", "), SynonymsDir)
}

// checkAcrossLanguages enforces that every language has the same ids, each with one category. A
// procedure whose file failed to parse in some language (failedIDs) is not compared, nor is a
// language with such a file (failedLangs) counted as empty, nor any language when the root held
// a folder that is not one: those faults are reported already. categoryLine holds the line of
// each document's category.
func (c *Corpus) checkAcrossLanguages(failedIDs, failedLangs map[string]bool, categoryLine map[*Document]int, root string, badFolder bool) []error {
	var errs []error
	ids := map[string]string{} // id -> category, from whichever language and version saw it first
	langs := map[string]bool{}
	keys := sortedKeys(c.versions)
	for _, lang := range Languages {
		for _, key := range keys {
			if !strings.HasPrefix(key, lang+"/") {
				continue
			}
			for _, d := range c.versions[key] {
				if cat, ok := ids[d.ID]; ok && cat != d.Category {
					errs = append(errs, ruleError(shownPath(root, strings.TrimPrefix(d.Path, "procedures/")), categoryLine[d], "category",
						"category %q differs from %q used for %s in another language", d.Category, cat, d.ID))
				}
				ids[d.ID] = d.Category
				langs[d.Language] = true
			}
		}
	}
	for _, lang := range Languages {
		if !langs[lang] {
			if !failedLangs[lang] && !badFolder {
				errs = append(errs, ruleError(shownPath(root, lang), 0, "languages", "no procedures for language %q", lang))
			}
			continue
		}
		for _, id := range slices.Sorted(maps.Keys(ids)) {
			if c.versions[lang+"/"+id] == nil && !failedIDs[id] {
				errs = append(errs, ruleError(shownPath(root, lang+"/"+id+".md"), 0, "languages", "procedure %q exists in another language but not in %q", id, lang))
			}
		}
	}
	for _, docs := range c.byLang {
		slices.SortFunc(docs, func(a, b *Document) int { return strings.Compare(a.ID, b.ID) })
	}
	return errs
}

func hash(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}
