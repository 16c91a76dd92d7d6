// Command compare measures the project's lookup beside bleve on generated corpora of several
// sizes and prints a table (BENCHMARKS.md at the repository root has one run's figures):
//
//	go run ./cmd/compare -sizes 22,220,2200,10000 -runs 5 -out results.json
//
// For each size it writes a corpus (package gen), loads it with knowledge.LoadDir, and measures
// three systems (package systems): the lookup service as a function builds and calls it, the
// project's BM25 search alone, and bleve with a scorch index and BM25 scoring.
//
//   - build: building the index (and the service) from the loaded corpus, the median of
//     -build-runs builds, the systems' builds interleaved;
//   - median, p99: every question of the evaluation sets is asked -runs times of every system,
//     the systems interleaved question by question in a rotating order; each question's latency
//     is the median of its runs, and the table gives the median and the 99th percentile of those;
//   - B/op, allocs/op: the runtime.MemStats deltas of one pass over every question, per question;
//   - heap: live heap (HeapAlloc after runtime.GC) of the loaded corpus and the built system,
//     measured in a fresh process per system and size, so that neither system's garbage or
//     caches count against the other (bleve's persisted segments are memory-mapped files: they
//     are in the process's file-backed RSS and in the index's size on disk, not in the heap);
//   - top-1, top-3: the expected procedure as the primary result and among the first three
//     results, over the answerable questions.
//
// -out writes the report as JSON when the name ends in .json, as Markdown otherwise.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/bench/gen"
	"github.com/northstar-mobility/mobilityops-knowledge/bench/systems"
	"github.com/northstar-mobility/mobilityops-knowledge/eval"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
)

func main() {
	sizes := flag.String("sizes", "22,220,2200,10000", "corpus sizes, procedures over both languages, comma-separated")
	runs := flag.Int("runs", 5, "timed passes over every question per system")
	buildRuns := flag.Int("build-runs", 3, "index builds per system and size")
	out := flag.String("out", "", "also write the report to this file: JSON when it ends in .json, Markdown otherwise")
	evalDir := flag.String("eval", "../eval", "the folder of the evaluation sets (eval/*.yaml)")
	seed := flag.Uint64("seed", gen.DefaultSeed, "the corpus generator's seed")
	heapChild := flag.String("heap-child", "", "internal: measure the heap of one system (project or bleve) over the corpus in -corpus, print it as JSON and exit")
	corpusDir := flag.String("corpus", "", "internal: the corpus folder of -heap-child")
	flag.Parse()

	if *heapChild != "" {
		if err := measureHeap(os.Stdout, *heapChild, *corpusDir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	ns, err := parseSizes(*sizes)
	if err == nil && (*runs < 1 || *buildRuns < 1) {
		err = errors.New("-runs and -build-runs must be at least 1")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	rep, err := run(context.Background(), os.Stderr, ns, *runs, *buildRuns, *evalDir, *seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	writeMarkdown(os.Stdout, rep)
	if *out != "" {
		if err := writeFile(*out, rep); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 22 || n%2 != 0 {
			return nil, fmt.Errorf("-sizes: %q is not an even number of procedures of at least 22", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// Report is one run of the comparison.
type Report struct {
	Date       string  `json:"date"`
	GoVersion  string  `json:"go_version"`
	OS         string  `json:"os"`
	CPU        string  `json:"cpu"`
	CPUs       int     `json:"cpus"`
	Runs       int     `json:"runs"`
	BuildRuns  int     `json:"build_runs"`
	Seed       uint64  `json:"seed"`
	Questions  int     `json:"questions"`
	Answerable int     `json:"answerable"`
	Sizes      []Size  `json:"sizes"`
	Elapsed    float64 `json:"elapsed_seconds"`
}

// Size is the figures of one corpus size.
type Size struct {
	Procedures      int            `json:"procedures"`
	Generated       int            `json:"generated_ids"`
	Categories      int            `json:"categories"`
	DistinctWords   map[string]int `json:"distinct_words"`
	Vocabulary      map[string]int `json:"synthetic_vocabulary"`
	Passages        int            `json:"passages"`
	GenerateSeconds float64        `json:"generate_seconds"`
	LoadSeconds     float64        `json:"load_seconds"`
	BleveDiskBytes  int64          `json:"bleve_disk_bytes"`
	// Prebuilt is the project's prebuilt index of the corpus (cmd/index-build's file), what a
	// function loads at a cold start: its size, and a fresh process's load time and heap.
	Prebuilt *Prebuilt `json:"prebuilt,omitempty"`
	Systems  []System  `json:"systems"`
}

// System is the figures of one system at one size.
type System struct {
	Name        string                `json:"name"`
	BuildNs     int64                 `json:"build_ns,omitempty"` // median; 0 when it shares another system's index
	Builds      []int64               `json:"builds_ns,omitempty"`
	MedianNs    int64                 `json:"median_ns"`
	P99Ns       int64                 `json:"p99_ns"`
	BytesPerOp  float64               `json:"bytes_per_op"`
	AllocsPerOp float64               `json:"allocs_per_op"`
	Heap        *Heap                 `json:"heap,omitempty"`
	Top1        float64               `json:"top1"`
	Top3        float64               `json:"top3"`
	ByLanguage  map[string][2]float64 `json:"by_language"` // top-1, top-3
}

// Prebuilt is the project's prebuilt index at one size.
type Prebuilt struct {
	Bytes       int64   `json:"bytes"`
	EncodeNs    int64   `json:"encode_ns"`
	LoadSeconds float64 `json:"load_seconds"` // lexical.Load with its check of the corpus files
	Heap        Heap    `json:"heap"`         // the loaded index and corpus, as the lookup function holds them
}

// Heap is what a fresh process holds after loading the corpus and building one system, less what
// it held before.
type Heap struct {
	HeapAlloc int64 `json:"heap_alloc"`
	HeapInuse int64 `json:"heap_inuse"`
	RSSAnon   int64 `json:"rss_anon"`
	RSSFile   int64 `json:"rss_file"`
	// loadSeconds is the prebuilt index's load time, for -heap-child project-prebuilt.
	loadSeconds float64
}

func run(ctx context.Context, log io.Writer, sizes []int, runs, buildRuns int, evalDir string, seed uint64) (*Report, error) {
	start := time.Now()
	qs, err := eval.LoadDir(evalDir)
	if err != nil {
		return nil, err
	}
	rep := &Report{
		Date: time.Now().UTC().Format(time.DateOnly), GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH,
		CPU: cpuModel(), CPUs: runtime.NumCPU(), Runs: runs, BuildRuns: buildRuns, Seed: seed, Questions: len(qs),
	}
	for _, q := range qs {
		if q.Kind == eval.KindAnswerable {
			rep.Answerable++
		}
	}
	for _, n := range sizes {
		s, err := measureSize(ctx, log, n, qs, runs, buildRuns, seed)
		if err != nil {
			return nil, fmt.Errorf("%d procedures: %w", n, err)
		}
		rep.Sizes = append(rep.Sizes, s)
	}
	rep.Elapsed = time.Since(start).Seconds()
	return rep, nil
}

func measureSize(ctx context.Context, log io.Writer, n int, qs []eval.Question, runs, buildRuns int, seed uint64) (Size, error) {
	tmp, err := os.MkdirTemp("", "bench-compare-")
	if err != nil {
		return Size{}, err
	}
	defer os.RemoveAll(tmp)
	corpusDir := filepath.Join(tmp, "corpus")
	sz, c, err := generate(log, corpusDir, n, seed)
	if err != nil {
		return sz, err
	}

	// Heap first, each system in its own fresh process, one after the other.
	heaps := map[string]*Heap{}
	for _, name := range []string{"project", "bleve"} {
		h, err := childHeap(name, corpusDir)
		if err != nil {
			return sz, fmt.Errorf("heap of %s: %w", name, err)
		}
		heaps[name] = h
	}

	project, bl, builds, err := build(c, tmp, buildRuns, &sz)
	if err != nil {
		return sz, err
	}
	defer bl.Close()
	fmt.Fprintf(log, "%d procedures: built (project %v, bleve %v)\n", n, time.Duration(median(builds[0])), time.Duration(median(builds[1])))

	if err := prebuild(log, n, project, c, corpusDir, &sz); err != nil {
		return sz, err
	}

	sys := []systems.System{project, systems.NewLexical(project.Index), bl}
	out := make([]System, len(sys))
	for i, s := range sys {
		if out[i], err = accuracy(ctx, s, qs); err != nil {
			return sz, err
		}
	}
	out[0].BuildNs, out[0].Builds = median(builds[0]), builds[0]
	out[2].BuildNs, out[2].Builds = median(builds[1]), builds[1]
	out[0].Heap, out[2].Heap = heaps["project"], heaps["bleve"]

	lat, err := timed(ctx, sys, qs, runs)
	if err != nil {
		return sz, err
	}
	for i := range sys {
		per := make([]int64, len(qs))
		for qi := range qs {
			per[qi] = median(lat[i][qi])
		}
		out[i].MedianNs, out[i].P99Ns = median(per), percentile(per, 0.99)
		fmt.Fprintf(log, "%d procedures: %s median %v p99 %v top-1 %.1f %%\n", n, out[i].Name, time.Duration(out[i].MedianNs), time.Duration(out[i].P99Ns), 100*out[i].Top1)
	}
	sz.Systems = out
	return sz, nil
}

// generate writes a corpus of n procedures into corpusDir and loads it, and returns the size's
// first figures: the generated corpus, its passages, the time to generate and to load it.
func generate(log io.Writer, corpusDir string, n int, seed uint64) (Size, *knowledge.Corpus, error) {
	t := time.Now()
	st, err := gen.Write(corpusDir, n, seed)
	if err != nil {
		return Size{}, nil, err
	}
	sz := Size{Procedures: n, Generated: st.Generated, Categories: st.Categories, DistinctWords: st.DistinctWords,
		Vocabulary: st.Vocabulary, GenerateSeconds: time.Since(t).Seconds()}
	t = time.Now()
	c, err := knowledge.LoadDir(corpusDir)
	if err != nil {
		return sz, nil, err
	}
	sz.LoadSeconds = time.Since(t).Seconds()
	for _, lang := range knowledge.Languages {
		for _, d := range c.Documents(lang) {
			sz.Passages += len(d.Sections)
		}
	}
	fmt.Fprintf(log, "%d procedures: generated in %.1fs, loaded in %.1fs, %d passages\n", n, sz.GenerateSeconds, sz.LoadSeconds, sz.Passages)
	return sz, c, nil
}

// build builds the project's index and bleve's (in a folder under tmp) buildRuns times each,
// interleaved, and returns the last build of each and every build's time; bleve's size on disk
// goes into sz.
func build(c *knowledge.Corpus, tmp string, buildRuns int, sz *Size) (*systems.Project, *systems.Bleve, [2][]int64, error) {
	var project *systems.Project
	var bl *systems.Bleve
	var builds [2][]int64
	for r := range buildRuns {
		for i := range 2 {
			switch (r + i) % 2 {
			case 0:
				runtime.GC()
				t := time.Now()
				project = systems.NewProject(c)
				builds[0] = append(builds[0], int64(time.Since(t)))
			case 1:
				if bl != nil {
					bl.Close()
				}
				dir := filepath.Join(tmp, fmt.Sprintf("bleve-%d", r))
				runtime.GC()
				t := time.Now()
				b, err := systems.NewBleve(c, dir)
				if err != nil {
					return nil, nil, builds, err
				}
				builds[1] = append(builds[1], int64(time.Since(t)))
				bl = b
				if r < buildRuns-1 {
					bl.Close()
					bl = nil
					os.RemoveAll(dir)
				} else {
					sz.BleveDiskBytes = diskBytes(dir)
				}
			}
		}
	}
	return project, bl, builds, nil
}

// prebuild writes the prebuilt index beside the corpus as cmd/index-build writes it, then has a
// fresh process load it as a function's cold start loads it; the figures go into sz.
func prebuild(log io.Writer, n int, project *systems.Project, c *knowledge.Corpus, corpusDir string, sz *Size) error {
	t := time.Now()
	prebuilt := lexical.Encode(project.Index, c)
	sz.Prebuilt = &Prebuilt{Bytes: int64(len(prebuilt)), EncodeNs: int64(time.Since(t))}
	if err := os.WriteFile(filepath.Join(corpusDir, lexical.PrebuiltFile), prebuilt, 0o644); err != nil {
		return err
	}
	h, err := childHeap("project-prebuilt", corpusDir)
	if err != nil {
		return fmt.Errorf("heap of the prebuilt index: %w", err)
	}
	sz.Prebuilt.Heap, sz.Prebuilt.LoadSeconds = *h, h.loadSeconds
	fmt.Fprintf(log, "%d procedures: prebuilt index %.1f MB, loaded in %.2fs, heap %.1f MB\n", n, mb(sz.Prebuilt.Bytes),
		h.loadSeconds, mb(h.HeapAlloc))
	return nil
}

// accuracy measures system s: one pass for accuracy, which also warms every cache a running
// function would have warm, then one pass for allocations, alone so that the deltas are s's.
func accuracy(ctx context.Context, s systems.System, qs []eval.Question) (System, error) {
	out := System{Name: s.Name()}
	acc := systems.Accuracy{}
	byLang := map[string]*systems.Accuracy{}
	for _, q := range qs {
		a, err := s.Ask(ctx, q.Language, q.Question)
		if err != nil {
			return out, fmt.Errorf("%s: %s: %w", s.Name(), q.ID, err)
		}
		acc.Score(q, a)
		if byLang[q.Language] == nil {
			byLang[q.Language] = &systems.Accuracy{}
		}
		byLang[q.Language].Score(q, a)
	}
	out.Top1, out.Top3 = acc.Top1Rate(), acc.Top3Rate()
	out.ByLanguage = map[string][2]float64{}
	for lang, a := range byLang {
		out.ByLanguage[lang] = [2]float64{a.Top1Rate(), a.Top3Rate()}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, q := range qs {
		if _, err := s.Ask(ctx, q.Language, q.Question); err != nil {
			return out, err
		}
	}
	runtime.ReadMemStats(&after)
	out.BytesPerOp = float64(after.TotalAlloc-before.TotalAlloc) / float64(len(qs))
	out.AllocsPerOp = float64(after.Mallocs-before.Mallocs) / float64(len(qs))
	return out, nil
}

// timed runs the timed passes: every question of every system, runs times, interleaved in a
// rotating order; the latencies by system, question and run.
func timed(ctx context.Context, sys []systems.System, qs []eval.Question, runs int) ([][][]int64, error) {
	lat := make([][][]int64, len(sys))
	for i := range lat {
		lat[i] = make([][]int64, len(qs))
	}
	runtime.GC()
	for r := range runs {
		for qi, q := range qs {
			for k := range sys {
				i := (k + r + qi) % len(sys)
				t := time.Now()
				if _, err := sys[i].Ask(ctx, q.Language, q.Question); err != nil {
					return nil, err
				}
				lat[i][qi] = append(lat[i][qi], int64(time.Since(t)))
			}
		}
	}
	return lat, nil
}

// median is the middle value (the lower middle for an even count).
func median(v []int64) int64 { return percentile(v, 0.5) }

// percentile is the nearest-rank percentile p of v.
func percentile(v []int64, p float64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

// childHeap runs this command again as a fresh process that measures one system's heap.
func childHeap(system, corpusDir string) (*Heap, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-heap-child", system, "-corpus", corpusDir)
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var h struct {
		Heap
		Load float64 `json:"load_seconds"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("%s: %w", raw, err)
	}
	h.Heap.loadSeconds = h.Load
	return &h.Heap, nil
}

// measureHeap is the child's side: the heap and RSS after loading the corpus and building the
// system, less those before.
func measureHeap(w io.Writer, system, corpusDir string) error {
	if system == "project-prebuilt" {
		return measurePrebuilt(w, corpusDir)
	}
	base, baseAnon, baseFile := heapNow()
	c, err := knowledge.LoadDir(corpusDir)
	if err != nil {
		return err
	}
	var keep any
	switch system {
	case "project":
		keep = systems.NewProject(c)
	case "bleve":
		dir, err := os.MkdirTemp("", "bench-heap-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		b, err := systems.NewBleve(c, dir)
		if err != nil {
			return err
		}
		defer b.Close()
		keep = b
	default:
		return fmt.Errorf("-heap-child: unknown system %q", system)
	}
	after, anon, file := heapNow()
	runtime.KeepAlive(c)
	runtime.KeepAlive(keep)
	return json.NewEncoder(w).Encode(Heap{
		HeapAlloc: int64(after.HeapAlloc) - int64(base.HeapAlloc), HeapInuse: int64(after.HeapInuse) - int64(base.HeapInuse),
		RSSAnon: anon - baseAnon, RSSFile: file - baseFile,
	})
}

// measurePrebuilt loads the prebuilt index of corpusDir as the lookup function does (the file
// mapped and used in place) and reports its load time, the heap it holds, and the resident
// memory: anonymous, and file-backed (the mapped file's pages the load touched).
func measurePrebuilt(w io.Writer, corpusDir string) error {
	procs := os.DirFS(corpusDir)
	syns, err := fs.Sub(procs, knowledge.SynonymsDir)
	if err != nil {
		return err
	}
	base, baseAnon, baseFile := heapNow()
	t := time.Now()
	b, err := mapFile(filepath.Join(corpusDir, lexical.PrebuiltFile))
	if err != nil {
		return err
	}
	ix, c, err := lexical.Load(b, lexical.LoadOptions{Procs: procs, Syns: syns, Static: true})
	if err != nil {
		return err
	}
	load := time.Since(t).Seconds()
	after, anon, file := heapNow()
	runtime.KeepAlive(ix)
	runtime.KeepAlive(c)
	return json.NewEncoder(w).Encode(struct {
		Heap
		Load float64 `json:"load_seconds"`
	}{Heap{HeapAlloc: int64(after.HeapAlloc) - int64(base.HeapAlloc), HeapInuse: int64(after.HeapInuse) - int64(base.HeapInuse),
		RSSAnon: anon - baseAnon, RSSFile: file - baseFile}, load})
}

// heapNow collects garbage twice (the second collects what finalizers freed) and returns the
// memory statistics and the process's anonymous and file-backed resident bytes.
func heapNow() (runtime.MemStats, int64, int64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	anon, file := rss()
	return m, anon, file
}

// rss reads RssAnon and RssFile from /proc/self/status (0 where there is none).
func rss() (anon, file int64) {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "RssAnon":
			anon = kb << 10
		case "RssFile":
			file = kb << 10
		}
	}
	return anon, file
}

func diskBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func cpuModel() string {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func writeFile(path string, rep *Report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if strings.HasSuffix(path, ".json") {
		enc := json.NewEncoder(f)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		writeMarkdown(f, rep)
	}
	return errors.Join(err, f.Close())
}

// writeMarkdown writes the table of figures, with a ratio row per size for the project's lookup
// and its BM25 against bleve, and the corpora's figures under it.
func writeMarkdown(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "%s, %s, %s, %d CPUs (%s); %d questions (%d answerable), %d timed runs, %d builds, seed %d; %.0f s in all.\n\n",
		rep.Date, rep.GoVersion, rep.OS, rep.CPUs, rep.CPU, rep.Questions, rep.Answerable, rep.Runs, rep.BuildRuns, rep.Seed, rep.Elapsed)
	fmt.Fprintln(w, "| size | system | build | median | p99 | B/op | allocs/op | heap MB | top-1 | top-3 |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, s := range rep.Sizes {
		for _, x := range s.Systems {
			build, heap := "(shared)", "(shared)"
			if x.BuildNs > 0 {
				build = dur(x.BuildNs)
			}
			if x.Heap != nil {
				heap = fmt.Sprintf("%.1f", float64(x.Heap.HeapAlloc)/(1<<20))
			}
			fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %.0f | %s | %.1f %% | %.1f %% |\n", s.Procedures, x.Name, build,
				dur(x.MedianNs), dur(x.P99Ns), bytes(x.BytesPerOp), x.AllocsPerOp, heap, 100*x.Top1, 100*x.Top3)
		}
		b := s.Systems[len(s.Systems)-1]
		for _, x := range s.Systems[:len(s.Systems)-1] {
			build, heap := "", ""
			if x.BuildNs > 0 {
				build = ratio(float64(x.BuildNs), float64(b.BuildNs))
			}
			if x.Heap != nil && b.Heap != nil {
				heap = ratio(float64(x.Heap.HeapAlloc), float64(b.Heap.HeapAlloc))
			}
			fmt.Fprintf(w, "| %d | *%s / %s* | %s | %s | %s | %s | %s | %s | %+.1f pp | %+.1f pp |\n", s.Procedures, x.Name, b.Name, build,
				ratio(float64(x.MedianNs), float64(b.MedianNs)), ratio(float64(x.P99Ns), float64(b.P99Ns)),
				ratio(x.BytesPerOp, b.BytesPerOp), ratio(x.AllocsPerOp, b.AllocsPerOp), heap, 100*(x.Top1-b.Top1), 100*(x.Top3-b.Top3))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| size | ids per language | passages | categories | distinct words en / de | synthetic vocabulary per language | load | bleve on disk | RSS after build, project / bleve (anon + file) | project prebuilt index: size, load, heap |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, s := range rep.Sizes {
		var p, b *Heap
		for _, x := range s.Systems {
			switch {
			case x.Name == "project":
				p = x.Heap
			case x.Name == "bleve":
				b = x.Heap
			}
		}
		rssCell := ""
		if p != nil && b != nil {
			rssCell = fmt.Sprintf("%.0f + %.0f / %.0f + %.0f MB", mb(p.RSSAnon), mb(p.RSSFile), mb(b.RSSAnon), mb(b.RSSFile))
		}
		pre := ""
		if s.Prebuilt != nil {
			pre = fmt.Sprintf("%.1f MB, %.2f s, %.1f MB", mb(s.Prebuilt.Bytes), s.Prebuilt.LoadSeconds, mb(s.Prebuilt.Heap.HeapAlloc))
		}
		fmt.Fprintf(w, "| %d | %d | %d | %d | %d / %d | %d | %.1f s | %.1f MB | %s | %s |\n", s.Procedures, s.Procedures/2, s.Passages, s.Categories,
			s.DistinctWords["en"], s.DistinctWords["de"], s.Vocabulary["en"], s.LoadSeconds, mb(s.BleveDiskBytes), rssCell, pre)
	}
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func dur(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
}

func bytes(n float64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", n/(1<<20))
	case n >= 10<<10:
		return fmt.Sprintf("%.0f kB", n/(1<<10))
	}
	return fmt.Sprintf("%.0f B", n)
}
