package wire

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
)

// embeddedCorpus returns the corpus compiled into the binary: its prebuilt index and its source
// files. A test replaces it with files edited after the index was written.
var embeddedCorpus = func() (index []byte, procs, syns fs.FS, err error) {
	procs, syns, err = knowledge.EmbeddedSources()
	return knowledge.EmbeddedIndex(), procs, syns, err
}

// loadKnowledge loads the corpus, and the analysed index of every version on file when
// needs.Index is set. Both come from
// the prebuilt index (the embedded one, or index.bin in KNOWLEDGE_DIR, written by
// cmd/index-build) while it matches the corpus files, which takes a few milliseconds; otherwise
// the procedures are parsed and analysed here, and the log says so, why, and which command
// refreshes the index.
func loadKnowledge(cfg config.Config, log *slog.Logger, needs Needs) (_ *knowledge.Corpus, _ *lexical.Index, source string, err error) {
	withIndex := needs.Index
	start := time.Now()
	prebuilt, release, procs, syns, where, err := prebuiltSource(cfg)
	if err != nil {
		return nil, nil, "", err
	}
	embedded := cfg.KnowledgeDir == ""
	if prebuilt != nil {
		var c *knowledge.Corpus
		var ix *lexical.Index
		// The prebuilt bytes stay for the life of the process and never change (the embedded
		// index is part of the binary; a KNOWLEDGE_DIR file stays mapped, and cmd/index-build
		// replaces it by a rename, never rewriting the mapped file): the corpus's text, the
		// vocabulary and the integer arrays are used in place instead of copied into the heap.
		// Either is used only while the fingerprint of the files beside it is the one it names:
		// a go build compiles the procedures as they are on disk and the embedded index as
		// `go generate ./knowledge` last wrote it.
		ix, c, err = lexical.Load(prebuilt, lexical.LoadOptions{Procs: procs, Syns: syns, Raw: needs.Raw, Static: true,
			Compiled: embedded, CorpusOnly: !withIndex})
		if err == nil {
			log.Debug("knowledge loaded from the prebuilt index", "prebuilt", where, "index", withIndex,
				"duration_ms", float64(time.Since(start).Microseconds())/1000)
			return c, ix, "prebuilt index", nil
		}
		release()
		refresh := "`go run ./cmd/index-build -dir " + cfg.KnowledgeDir + "`"
		if embedded {
			refresh = "`go generate ./knowledge`"
		}
		log.Warn("prebuilt index not used: the procedures are parsed and analysed at start instead; "+
			"refresh it with "+refresh+" (see docs/corpus.md)", "prebuilt", where, "error", err.Error())
	}
	c, err := loadCorpus(cfg, procs, syns)
	if err != nil {
		return nil, nil, "", err
	}
	if prebuilt == nil {
		log.Info("no prebuilt index in KNOWLEDGE_DIR: the procedures are parsed and analysed at start; "+
			"`go run ./cmd/index-build -dir "+cfg.KnowledgeDir+"` writes one", "knowledge_dir", cfg.KnowledgeDir)
	}
	var ix *lexical.Index
	if withIndex {
		// Every version on file, as a prebuilt index holds them: each day's index is a view of
		// it (see New).
		ix = lexical.BuildAll(c)
	}
	log.Info("knowledge parsed and analysed at start", "index", withIndex,
		"duration_ms", float64(time.Since(start).Microseconds())/1000)
	return c, ix, "parsed", nil
}

// prebuiltSource returns the prebuilt index to try: the embedded one with the embedded files,
// or KNOWLEDGE_DIR's with the folder's files it must match (nil bytes when that folder has no
// prebuilt index). release frees the bytes when they are not used; a loaded index keeps them.
func prebuiltSource(cfg config.Config) (b []byte, release func(), procs, syns fs.FS, where string, err error) {
	release = func() {}
	if cfg.KnowledgeDir == "" {
		b, procs, syns, err = embeddedCorpus()
		return b, release, procs, syns, "embedded", err
	}
	where = filepath.Join(cfg.KnowledgeDir, lexical.PrebuiltFile)
	if _, err := os.Stat(where); errors.Is(err, fs.ErrNotExist) {
		return nil, release, nil, nil, where, nil
	}
	if b, release, err = readPrebuilt(where); err != nil {
		return nil, func() {}, nil, nil, where, fmt.Errorf("KNOWLEDGE_DIR prebuilt index: %w", err)
	}
	procs = os.DirFS(cfg.KnowledgeDir)
	if fi, err := fs.Stat(procs, knowledge.SynonymsDir); err == nil && fi.IsDir() {
		if syns, err = fs.Sub(procs, knowledge.SynonymsDir); err != nil {
			release()
			return nil, func() {}, nil, nil, where, err
		}
	}
	return b, release, procs, syns, where, nil
}

// loadCorpus parses the corpus: KNOWLEDGE_DIR's folder, or the embedded files procs and syns.
func loadCorpus(cfg config.Config, procs, syns fs.FS) (*knowledge.Corpus, error) {
	if cfg.KnowledgeDir != "" {
		c, err := knowledge.LoadDir(cfg.KnowledgeDir)
		if err != nil {
			return nil, fmt.Errorf("KNOWLEDGE_DIR %s does not load (docs/corpus.md):\n%w", cfg.KnowledgeDir, err)
		}
		return c, nil
	}
	c, err := knowledge.LoadSources(procs, syns)
	if err != nil {
		return nil, fmt.Errorf("the embedded corpus does not load (docs/corpus.md):\n%w", err)
	}
	return c, nil
}
