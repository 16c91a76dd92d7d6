//go:build linux

package functions_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"golang.org/x/sys/unix"

	"github.com/northstar-mobility/mobilityops-knowledge/eval"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/wire"
)

// TestMemoryLimit runs the lookup function's bootstrap under aws-lambda-rie inside a cgroup (v1
// memory controller) limited to MEM_LIMIT_MB (default 256), as Lambda limits a function's
// memory: anonymous memory and the page cache the processes fault in both count, and there is
// no swap. The function gets the memory size Lambda would give it
// (AWS_LAMBDA_FUNCTION_MEMORY_SIZE, from which it sets its Go memory limit) and
// MEM_KNOWLEDGE_DIR as its KNOWLEDGE_DIR (a corpus with its prebuilt index.bin). It sends
// MEM_LOOKUPS lookups (default 300) of the evaluation questions, as of the days MEM_AS_OF lists
// in turn when it is set (an audit cycling as_of), and compares every answer with
// the same lookup made in this process, outside the limit, on the same corpus. It reports the
// cgroup's peak usage, failcnt and OOM kills, and the bootstrap's own peak resident memory; it
// fails when an answer is missing, not 200 or different, or the function was killed.
// `make mem-limit` runs it on a large corpus as a bench script. Without MEM_KNOWLEDGE_DIR, as in
// `make test`, it runs the embedded corpus with 30 lookups, so that CI proves the function still
// serves under the limit. Where the memory cgroup cannot be written (not root, cgroup v2 only) it
// fails under CI (CI set) and skips elsewhere, saying why.
func TestMemoryLimit(t *testing.T) {
	dir := os.Getenv("MEM_KNOWLEDGE_DIR")
	limitMB := envInt("MEM_LIMIT_MB", 256)
	lookups := envInt("MEM_LOOKUPS", 300)
	if dir == "" {
		lookups = envInt("MEM_LOOKUPS", 30)
	}
	var asOf []string // MEM_AS_OF: days the lookups cycle through, comma-separated
	if v := os.Getenv("MEM_AS_OF"); v != "" {
		asOf = strings.Split(v, ",")
	}
	cg, err := newMemoryCgroup(int64(limitMB) << 20)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no memory cgroup to run in (CI needs root and the cgroup v1 memory controller): %v", err)
		}
		t.Skipf("no memory cgroup to run in: %v", err)
	}
	t.Cleanup(cg.remove)

	root, err := ddblocal.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	questions := memQuestions(t, root, lookups)
	rie, bins := built(t, root)
	table := startTable(t, root)

	// The corpus's pages must be charged to the cgroup, as they would be in a fresh sandbox:
	// drop them from the page cache (they are charged to whoever faulted them in first).
	var evicted int64
	if dir != "" {
		if evicted, err = evict(dir); err != nil {
			t.Fatal(err)
		}
	}
	env := append(lambdaLikeEnv(), "AUTH_MODE=jwt", "TABLE_NAME=rie-knowledge", "DYNAMODB_ENDPOINT="+table,
		"AWS_LAMBDA_FUNCTION_NAME=lookup", "KNOWLEDGE_PROVIDER=demo", "KNOWLEDGE_DIR="+dir,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(limitMB))
	// The emulator starts inside the cgroup (a shell moves itself there, then execs it), so
	// that it and the bootstrap it starts are limited from their first page.
	f, stop := emulate(t, rie, bins["lookup"], "lookup", env,
		"/bin/sh", "-c", `echo $$ > "$0" && exec "$@"`, filepath.Join(cg.dir, "cgroup.procs"))
	defer stop()

	start := time.Now()
	answers := make([]reply, 0, len(questions))
	for i, q := range questions {
		r, err := invokeOnce(f, lookupEvent(t, q, i, asOf))
		if err != nil {
			t.Errorf("lookup %d: %v", i, err)
			break
		}
		answers = append(answers, r)
		if i == 0 {
			t.Logf("MEM first answer (cold start included) after %v", time.Since(start).Round(time.Millisecond))
		}
	}
	elapsed := time.Since(start)
	hwm, anon, file := bootstrapMemory(cg)
	usage := cg.stats()
	stop()
	logs := f.logs.String()
	corpus := dir
	if corpus == "" {
		corpus = "embedded"
	}
	t.Logf("MEM corpus %s (%d MB of files evicted from the page cache first), limit %d MB, AWS_LAMBDA_FUNCTION_MEMORY_SIZE=%d",
		corpus, evicted>>20, limitMB, limitMB)
	if m := regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)`).FindStringSubmatch(logs); m != nil {
		t.Logf("MEM Init Duration %s ms", m[1])
	}
	t.Logf("MEM cgroup peak %.1f MB (memory.max_usage_in_bytes), failcnt %d (memsw %d), OOM kills %d; at the end rss %.1f MB, cache %.1f MB (mapped_file %.1f MB)",
		mb(usage["max_usage_in_bytes"]), usage["failcnt"], usage["memsw.failcnt"], usage["oom_kill"], mb(usage["total_rss"]), mb(usage["total_cache"]),
		mb(usage["total_mapped_file"]))
	t.Logf("MEM bootstrap peak resident memory %.1f MB (VmHWM, the mapped index's pages included); at the end %.1f MB anonymous, %.1f MB file-backed",
		mb(hwm), mb(anon), mb(file))
	if strings.Contains(logs, "signal: killed") || usage["oom_kill"] > 0 {
		t.Errorf("the function was killed (%d OOM kills in the cgroup):\n%s", usage["oom_kill"], tail(logs, 2000))
	}
	if n := strings.Count(logs, `"cold_start":true`); n != 1 {
		t.Errorf("%d cold starts, want 1 (a restarted function):\n%s", n, tail(logs, 2000))
	}

	// The reference answers, outside the limit, once the function's run is over (so that the
	// corpus's pages were faulted in by the function first).
	h := referenceHandler(t, dir)
	ok, differ, failed := 0, 0, 0
	for i, got := range answers {
		q := questions[i]
		want, err := h.Lambda(context.Background(), apiEvent(t, q, i, asOf))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case got.StatusCode != 200:
			failed++
			if failed <= 3 {
				t.Errorf("lookup %d (%q): status %d: %s", i, q.Question, got.StatusCode, got.Body)
			}
		case stable(t, got.Body) != stable(t, want.Body):
			differ++
			if differ <= 3 {
				t.Errorf("lookup %d (%q) differs from the unlimited lookup:\n got %s\nwant %s", i, q.Question,
					stable(t, got.Body), stable(t, want.Body))
			}
		default:
			ok++
		}
	}
	t.Logf("MEM %d of %d lookups answered in %v: %d identical to the unlimited lookup and 200, %d different, %d failed",
		len(answers), len(questions), elapsed.Round(time.Millisecond), ok, differ, failed)
}

// invokeOnce sends one event to a function that has started, and reports a failed invocation
// (a function killed for its memory answers 502) instead of retrying.
func invokeOnce(f *fn, payload []byte) (reply, error) {
	status, body, err := f.post(payload)
	var out reply
	if err != nil {
		return out, err
	}
	if status != http.StatusOK {
		return out, fmt.Errorf("the emulator answered %d: %s", status, body)
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return out, fmt.Errorf("%w: %s", err, body)
	}
	return out, nil
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// memQuestions returns n questions of the evaluation sets, in a fixed order that spreads over
// every set and both languages.
func memQuestions(t *testing.T, root string, n int) []eval.Question {
	t.Helper()
	all, err := eval.LoadDir(filepath.Join(root, "eval"))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]eval.Question, 0, n)
	step := max(1, len(all)/n)
	for i := 0; len(out) < n; i++ {
		out = append(out, all[(i*step+i/len(all))%len(all)])
	}
	return out
}

// apiEvent is lookup i of question q, as of asOf[i] (cycled; today when asOf is empty).
func apiEvent(t *testing.T, q eval.Question, i int, asOf []string) events.APIGatewayV2HTTPRequest {
	t.Helper()
	req := map[string]any{"question": q.Question, "language": q.Language, "top_k": 5}
	if len(asOf) > 0 {
		req["as_of"] = asOf[i%len(asOf)]
	}
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	ev.Version, ev.RouteKey, ev.RawPath = "2.0", "POST /api/v1/knowledge/lookup", "/api/v1/knowledge/lookup"
	ev.Headers = map[string]string{"content-type": "application/json", "x-correlation-id": fmt.Sprintf("mem-%d", i)}
	ev.RequestContext.RouteKey, ev.RequestContext.RequestID = ev.RouteKey, fmt.Sprintf("mem-request-%d", i)
	ev.RequestContext.HTTP.Method, ev.RequestContext.HTTP.Path = "POST", ev.RawPath
	ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
		JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{
			Claims: map[string]string{"sub": "mem-agent", "scope": "knowledge:read"}}}
	ev.Body = string(body)
	return ev
}

func lookupEvent(t *testing.T, q eval.Question, i int, asOf []string) []byte {
	t.Helper()
	b, err := json.Marshal(apiEvent(t, q, i, asOf))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// referenceHandler is the lookup function's handler built in this process on dir, with the
// in-memory record store.
func referenceHandler(t *testing.T, dir string) *api.Handler {
	t.Helper()
	env := map[string]string{"AUTH_MODE": "jwt", "KNOWLEDGE_PROVIDER": "demo", "KNOWLEDGE_DIR": dir}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	p, err := wire.New(context.Background(), cfg, io.Discard, wire.Needs{Index: true})
	if err != nil {
		t.Fatal(err)
	}
	return p.Handler(api.FunctionLookup, api.Services{Lookup: p.Lookup(nil)})
}

// stable is a lookup's response body without what differs between two identical lookups (the
// invocation's id and its timings).
func stable(t *testing.T, body string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return body
	}
	var strip func(v any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if k == "invocation_id" || strings.HasSuffix(k, "_ms") || strings.HasSuffix(k, "_at") {
					delete(v, k)
					continue
				}
				strip(x)
			}
		case []any:
			for _, x := range v {
				strip(x)
			}
		}
	}
	strip(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// memoryCgroup is a child of this process's cgroup in the v1 memory controller.
type memoryCgroup struct{ dir string }

func newMemoryCgroup(limit int64) (*memoryCgroup, error) {
	const mount = "/sys/fs/cgroup/memory"
	if _, err := os.Stat(filepath.Join(mount, "memory.limit_in_bytes")); err != nil {
		return nil, fmt.Errorf("no cgroup v1 memory controller at %s: %w", mount, err)
	}
	parent := mount
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if parts := strings.SplitN(line, ":", 3); len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), "memory") {
				parent = filepath.Join(mount, parts[2])
			}
		}
	}
	cg := &memoryCgroup{dir: filepath.Join(parent, fmt.Sprintf("mem-limit-%d", os.Getpid()))}
	if err := os.Mkdir(cg.dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create a memory cgroup (root, cgroup v1 needed): %w", err)
	}
	for _, w := range []struct {
		file     string
		value    int64
		optional bool
	}{
		{"memory.limit_in_bytes", limit, false},
		// No swap, as in Lambda (only where the kernel accounts swap).
		{"memory.memsw.limit_in_bytes", limit, true},
		{"memory.swappiness", 0, true},
	} {
		err := os.WriteFile(filepath.Join(cg.dir, w.file), []byte(strconv.FormatInt(w.value, 10)), 0)
		if err != nil && !(w.optional && errors.Is(err, fs.ErrNotExist)) {
			cg.remove()
			return nil, fmt.Errorf("%s: %w", w.file, err)
		}
	}
	return cg, nil
}

// stats reads the cgroup's counters: max_usage_in_bytes, failcnt, oom_kill (memory.oom_control)
// and memory.stat's fields.
func (cg *memoryCgroup) stats() map[string]int64 {
	out := map[string]int64{}
	for _, name := range []string{"max_usage_in_bytes", "failcnt", "usage_in_bytes", "memsw.failcnt"} {
		b, _ := os.ReadFile(filepath.Join(cg.dir, "memory."+name))
		out[name], _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	}
	for _, file := range []string{"memory.oom_control", "memory.stat"} {
		b, _ := os.ReadFile(filepath.Join(cg.dir, file))
		s := bufio.NewScanner(bytes.NewReader(b))
		for s.Scan() {
			if k, v, ok := strings.Cut(s.Text(), " "); ok {
				out[k], _ = strconv.ParseInt(v, 10, 64)
			}
		}
	}
	return out
}

// remove kills what is left in the cgroup and removes it.
func (cg *memoryCgroup) remove() {
	for range 50 {
		b, _ := os.ReadFile(filepath.Join(cg.dir, "cgroup.procs"))
		pids := strings.Fields(string(b))
		if len(pids) == 0 {
			break
		}
		for _, p := range pids {
			if pid, err := strconv.Atoi(p); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = os.Remove(cg.dir)
}

// bootstrapMemory is the bootstrap process's peak resident memory (VmHWM) and its anonymous and
// file-backed resident memory now (RssAnon, RssFile), from /proc.
func bootstrapMemory(cg *memoryCgroup) (hwm, anon, file int64) {
	b, _ := os.ReadFile(filepath.Join(cg.dir, "cgroup.procs"))
	for _, p := range strings.Fields(string(b)) {
		exe, _ := os.Readlink(filepath.Join("/proc", p, "exe"))
		if filepath.Base(exe) != "bootstrap" {
			continue
		}
		st, _ := os.ReadFile(filepath.Join("/proc", p, "status"))
		for _, line := range strings.Split(string(st), "\n") {
			name, v, _ := strings.Cut(line, ":")
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			switch name {
			case "VmHWM":
				hwm = kb << 10
			case "RssAnon":
				anon = kb << 10
			case "RssFile":
				file = kb << 10
			}
		}
	}
	return hwm, anon, file
}

// evict drops the files under dir from the page cache (POSIX_FADV_DONTNEED) and returns their
// size.
func evict(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil {
			total += fi.Size()
		}
		return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	})
	return total, err
}
