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

// loadKnowledge loads the corpus, and its analysed index when needs.Index is set. Both come from
// the prebuilt index (the embedded one, or index.bin in KNOWLEDGE_DIR, written by
// cmd/index-build) while it matches the corpus files, which takes a few milliseconds; otherwise
// the procedures are parsed and analysed here, and the log says so and why.
func loadKnowledge(cfg config.Config, log *slog.Logger, needs Needs) (*knowledge.Corpus, *lexical.Index, error) {
	withIndex := needs.Index
	start := time.Now()
	prebuilt, release, procs, syns, where, err := prebuiltSource(cfg)
	if err != nil {
		return nil, nil, err
	}
	if prebuilt != nil {
		var c *knowledge.Corpus
		var ix *lexical.Index
		// The prebuilt bytes stay for the life of the process and never change (the embedded
		// index is part of the binary; a KNOWLEDGE_DIR file stays mapped, and cmd/index-build
		// replaces it by a rename, never rewriting the mapped file): the corpus's text, the
		// vocabulary and the integer arrays are used in place instead of copied into the heap.
		// The embedded index is checked against the embedded files when the binary is built
		// (lexical.LoadEmbedded), a KNOWLEDGE_DIR one against its folder's files here.
		embedded := cfg.KnowledgeDir == ""
		switch {
		case withIndex && embedded:
			ix, c, err = lexical.LoadEmbedded(needs.Raw)
		case withIndex:
			ix, c, err = lexical.LoadStatic(prebuilt, procs, syns, needs.Raw)
		case embedded:
			c, err = lexical.LoadCorpusEmbedded(needs.Raw)
		default:
			c, err = lexical.LoadCorpusStatic(prebuilt, procs, syns, needs.Raw)
		}
		if err == nil {
			log.Debug("knowledge loaded from the prebuilt index", "prebuilt", where, "index", withIndex,
				"duration_ms", float64(time.Since(start).Microseconds())/1000)
			return c, ix, nil
		}
		release()
		log.Warn("prebuilt index not used: the procedures are parsed and analysed at start instead; "+
			"rebuild it with `go run ./cmd/index-build` (see docs/corpus.md)", "prebuilt", where, "error", err.Error())
	} else {
		log.Info("no prebuilt index in KNOWLEDGE_DIR: the procedures are parsed and analysed at start; "+
			"`go run ./cmd/index-build -dir <dir>` writes one", "knowledge_dir", cfg.KnowledgeDir)
	}
	c, err := loadCorpus(cfg)
	if err != nil {
		return nil, nil, err
	}
	var ix *lexical.Index
	if withIndex {
		ix = lexical.Build(c)
	}
	log.Info("knowledge parsed and analysed at start", "index", withIndex,
		"duration_ms", float64(time.Since(start).Microseconds())/1000)
	return c, ix, nil
}

// prebuiltSource returns the prebuilt index to try: the embedded one, or KNOWLEDGE_DIR's with
// the folder's files it must match (nil bytes when that folder has no prebuilt index). release
// frees the bytes when they are not used; a loaded index keeps them.
func prebuiltSource(cfg config.Config) (b []byte, release func(), procs, syns fs.FS, where string, err error) {
	release = func() {}
	if cfg.KnowledgeDir == "" {
		return knowledge.EmbeddedIndex(), release, nil, nil, "embedded", nil
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

func loadCorpus(cfg config.Config) (*knowledge.Corpus, error) {
	if cfg.KnowledgeDir != "" {
		c, err := knowledge.LoadDir(cfg.KnowledgeDir)
		if err != nil {
			return nil, fmt.Errorf("KNOWLEDGE_DIR %s: %w", cfg.KnowledgeDir, err)
		}
		return c, nil
	}
	return knowledge.Embedded()
}
