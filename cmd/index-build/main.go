// Command index-build writes the prebuilt index of a corpus (see lexical.Encode): the checked
// procedures, every version on file, and their analysed form, which the functions load at a
// cold start instead of
// parsing and analysing the procedures. A function loads it only while the corpus files are
// the ones it was built from; otherwise it builds the index itself and logs that it did.
//
//	go run ./cmd/index-build -dir "$KNOWLEDGE_DIR"      # writes $KNOWLEDGE_DIR/index.bin
//	go run ./cmd/index-build -out knowledge/index.bin   # the embedded corpus (go generate ./knowledge)
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
)

func main() {
	dir := flag.String("dir", "", "corpus folder laid out as KNOWLEDGE_DIR (<language>/<id>.md, synonyms/); empty: the embedded corpus")
	out := flag.String("out", "", "file to write; default: "+lexical.PrebuiltFile+" in -dir")
	flag.Parse()
	if err := run(*dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "index-build:", err)
		os.Exit(1)
	}
}

func run(dir, out string) error {
	if out == "" {
		if dir == "" {
			return fmt.Errorf("-out is required for the embedded corpus")
		}
		out = filepath.Join(dir, lexical.PrebuiltFile)
	}
	start := time.Now()
	var c *knowledge.Corpus
	var err error
	if dir == "" {
		c, err = knowledge.Embedded()
	} else {
		c, err = knowledge.LoadDir(dir)
	}
	if err != nil {
		var re *knowledge.RuleError
		if errors.As(err, &re) {
			where := dir
			if where == "" {
				where = "the embedded corpus"
			}
			return fmt.Errorf("%s does not load (docs/corpus.md):\n%w", where, err)
		}
		return err
	}
	b := lexical.Encode(lexical.BuildAll(c), c)
	what := describe(c)
	if old, err := os.ReadFile(out); err == nil && string(old) == string(b) {
		fmt.Printf("%s is up to date: %s, %d bytes\n", out, what, len(b))
		return nil
	}
	if err := replace(out, b); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %s, %d bytes, in %v\n", out, what, len(b), time.Since(start).Round(time.Millisecond))
	return nil
}

// describe says what the index holds: the procedures, the version files, and the sets of
// versions in force they make (one per effective date).
func describe(c *knowledge.Corpus) string {
	ids, files := map[string]bool{}, 0
	for _, lang := range knowledge.Languages {
		for _, d := range c.All().Documents(lang) {
			ids[d.ID] = true
			files++
		}
	}
	s := fmt.Sprintf("%d procedures, %d files in %d languages", len(ids), files, len(knowledge.Languages))
	if c.Versioned() {
		s += fmt.Sprintf(" (every version on file; %d effective dates, each day's versions in force projected from it)",
			len(c.EffectiveDates()))
	}
	return s
}

// replace writes b to a new file beside path and renames it over path: a function that maps the
// old file (shared/wire) keeps reading the old file's pages, never a file rewritten under it, and
// a reader never sees a partly written one.
func replace(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}
