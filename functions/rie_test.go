// Package functions_test runs the real bootstrap binaries of every Lambda function under
// Amazon's Lambda Runtime Interface Emulator (aws-lambda-rie, pinned as a go.mod tool; no
// Docker) with every payload in events/, against DynamoDB Local.
package functions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// fn is one Lambda function under the emulator.
type fn struct {
	name string // directory under functions/
	addr string
	logs *testutil.SyncBuffer
}

// reply is what a function returned: an API Gateway response, or a scheduled event's result.
type reply struct {
	StatusCode int               `json:"statusCode"`
	Headers    map[string]string `json:"headers"`
	Body       string            `json:"body"`
	Refreshed  []struct {
		Language  string `json:"language"`
		Checked   int    `json:"checked"`
		Confirmed int    `json:"confirmed"`
		Complete  bool   `json:"complete"`
	} `json:"refreshed"`
}

// buildBootstrap builds the bootstrap of a function (or of the hello and deps baselines) into
// dir/<name>/ as `make build` does, for this machine's architecture, and returns its path.
func buildBootstrap(t *testing.T, root, dir, name string) string {
	t.Helper()
	bootstrap := filepath.Join(dir, name, "bootstrap")
	pkg := "./functions/" + name
	switch name {
	case "hello":
		pkg = "./internal/hellolambda"
	case "deps":
		pkg = "./internal/hellodeps"
	}
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-tags", "lambda.norpc", "-o", bootstrap, pkg)
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", name, err, out)
	}
	return bootstrap
}

// buildRIE builds aws-lambda-rie (pinned in go.mod) into dir.
func buildRIE(t *testing.T, dir string) string {
	t.Helper()
	rie := filepath.Join(dir, "aws-lambda-rie")
	if out, err := exec.Command("go", "build", "-o", rie, "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie").CombinedOutput(); err != nil {
		t.Fatalf("build aws-lambda-rie: %v\n%s", err, out)
	}
	return rie
}

func TestBootstrapsUnderRuntimeInterfaceEmulator(t *testing.T) {
	root, err := ddblocal.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rie := buildRIE(t, dir)
	table := startTable(t, root)

	fns := map[string]*fn{}
	// hello is the smallest Go function, built the same way: the baseline for Init Duration;
	// deps is hello linking the X-Ray SDK and the AWS clients every function carries.
	names := []string{"lookup", "status", "sync", "hello", "deps"}
	// Two ports per emulator (its invoke API and the Runtime API), all distinct.
	addrs := testutil.FreeAddrs(t, 2*len(names))
	for i, name := range names {
		bootstrap := buildBootstrap(t, root, dir, name)
		f := &fn{name: name, addr: addrs[2*i], logs: &testutil.SyncBuffer{}}
		// Each emulator also needs its own Runtime API port (9001 by default).
		cmd := exec.Command(rie, "--runtime-interface-emulator-address", f.addr,
			"--runtime-api-address", addrs[2*i+1], bootstrap)
		cmd.Env = append(os.Environ(), "AUTH_MODE=jwt", "TABLE_NAME=rie-knowledge", "DYNAMODB_ENDPOINT="+table,
			"AWS_LAMBDA_FUNCTION_NAME="+name, "KNOWLEDGE_PROVIDER=demo", "KNOWLEDGE_DIR=")
		cmd.Stdout, cmd.Stderr = f.logs, f.logs
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		})
		fns[name] = f
	}

	steps := []struct {
		function, event string
		status          int
		check           func(t *testing.T, body map[string]any, r reply)
	}{
		{"lookup", "lookup.json", 200, func(t *testing.T, b map[string]any, _ reply) {
			if b["correlation_id"] != "evt-lookup" || b["evidence_state"] == nil {
				t.Errorf("lookup body %v", b)
			}
		}},
		{"lookup", "invocation.json", 200, func(t *testing.T, b map[string]any, _ reply) {
			if b["tool"] != "lookup_knowledge" || b["actor_id"] != "agent-7" || b["question_sha256"] == nil {
				t.Errorf("invocation body %v", b)
			}
		}},
		{"lookup", "lookup-de.json", 200, nil},
		{"lookup", "lookup-out-of-domain.json", 200, nil},
		{"lookup", "ask.json", 200, nil},
		{"lookup", "lookup-invalid.json", 400, nil},
		{"lookup", "lookup-no-scope.json", 403, nil},
		// An MCP tools/call (stateless: no initialize first): the JSON-RPC result holds the
		// lookup's response as structured content, and its trace names the tool.
		{"lookup", "mcp-lookup.json", 200, func(t *testing.T, b map[string]any, _ reply) {
			res, _ := b["result"].(map[string]any)
			sc, _ := res["structuredContent"].(map[string]any)
			if b["jsonrpc"] != "2.0" || res["isError"] == true || sc["evidence_state"] != "grounded" ||
				sc["correlation_id"] != "evt-mcp-lookup" || sc["invocation_id"] == nil {
				t.Errorf("mcp body %v", b)
			}
		}},
		{"status", "health.json", 200, nil},
		{"status", "status.json", 200, func(t *testing.T, b map[string]any, _ reply) {
			if b["source_document_count"] != 11.0 || b["document_count"] != 11.0 || b["statistics_state"] != "verified" ||
				b["reported_synced_document_count"] != nil || b["last_sync_at"] != nil {
				t.Errorf("first status %v", b)
			}
		}},
		{"status", "status-de.json", 200, nil},
		{"status", "status-bad-language.json", 400, nil},
		{"sync", "sync.json", 200, func(t *testing.T, b map[string]any, _ reply) {
			if res, _ := b["results"].([]any); len(res) != 2 {
				t.Errorf("sync body %v", b)
			}
		}},
		{"sync", "sync-no-scope.json", 403, nil},
		{"sync", "sync-report.json", 202, nil},
		{"sync", "sync-report.json", 200, func(t *testing.T, b map[string]any, _ reply) {
			if b["duplicate"] != true {
				t.Errorf("second report %v", b)
			}
		}},
		{"sync", "sync-report-invalid.json", 400, nil},
		{"sync", "schedule.json", 0, func(t *testing.T, _ map[string]any, r reply) {
			if len(r.Refreshed) != 2 || !r.Refreshed[0].Complete || r.Refreshed[0].Confirmed != 11 {
				t.Errorf("scheduled refresh %+v", r.Refreshed)
			}
		}},
		{"status", "status.json", 200, func(t *testing.T, b map[string]any, _ reply) {
			v, _ := b["verification"].(map[string]any)
			cache, _ := v["cache"].(map[string]any)
			if b["reported_synced_document_count"] != 11.0 || b["last_sync_at"] != "2026-11-29T18:00:00Z" ||
				b["document_count"] != 11.0 || cache["hit"] != true {
				t.Errorf("status after the report and the refresh %v", b)
			}
		}},
	}
	used := map[string]bool{}
	var invocationID string
	for _, s := range steps {
		used[s.event] = true
		f := fns[s.function]
		payload, err := os.ReadFile(filepath.Join(root, "events", s.event))
		if err != nil {
			t.Fatal(err)
		}
		// The sample names a placeholder: read back the trace of the lookup just made.
		payload = bytes.ReplaceAll(payload, []byte("REPLACE_WITH_INVOCATION_ID"), []byte(invocationID))
		r := invoke(t, f, payload)
		if r.StatusCode != s.status {
			t.Errorf("%s %s: status %d, want %d: %s", s.function, s.event, r.StatusCode, s.status, r.Body)
			continue
		}
		var body map[string]any
		if s.status != 0 {
			if r.Headers["X-Correlation-Id"] == "" {
				t.Errorf("%s %s: no X-Correlation-Id", s.function, s.event)
			}
			if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
				t.Fatalf("%s %s: %v: %s", s.function, s.event, err, r.Body)
			}
		}
		if s.check != nil {
			s.check(t, body, r)
		}
		if id, ok := body["invocation_id"].(string); ok && s.event == "lookup.json" {
			invocationID = id
		}
	}
	for _, name := range []string{"hello", "deps"} {
		if r := invoke(t, fns[name], []byte(`{}`)); r.StatusCode != 0 {
			t.Errorf("%s: %+v", name, r)
		}
	}
	files, _ := filepath.Glob(filepath.Join(root, "events", "*.json"))
	for _, f := range files {
		if name := filepath.Base(f); !used[name] && name != "env.json" {
			t.Errorf("events/%s is not invoked by this test", name)
		}
	}
	// Init Duration of each function beside the baseline, measured in this run (figures go to
	// the README; timings are reported, never asserted).
	initMs := map[string]float64{}
	for name, f := range fns {
		if m := regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)`).FindStringSubmatch(f.logs.String()); m != nil {
			initMs[name], _ = strconv.ParseFloat(m[1], 64)
		}
	}
	for _, name := range []string{"hello", "deps", "lookup", "status", "sync"} {
		t.Logf("INIT %-7s %7.2f ms  %5.1fx hello", name, initMs[name], initMs[name]/initMs["hello"])
	}
	delete(fns, "hello")
	delete(fns, "deps")
	for _, f := range fns {
		logs := f.logs.String()
		if !strings.Contains(logs, `"store":"dynamodb:rie-knowledge"`) {
			t.Errorf("%s did not use DynamoDB:\n%s", f.name, logs)
		}
		if strings.Contains(logs, "deep scratch") {
			t.Errorf("%s: the log holds a question's text", f.name)
		}
		for _, bad := range []string{"trace write failed", "not cached", "could not be read"} {
			if strings.Contains(logs, bad) {
				t.Errorf("%s: %q in the log:\n%s", f.name, bad, logs)
			}
		}
	}
	if n := strings.Count(fns["lookup"].logs.String(), `"cold_start":true`); n != 1 {
		t.Errorf("lookup logged cold_start true %d times, want once", n)
	}
}

// startTable starts DynamoDB Local with the table of template.yaml and returns its endpoint.
func startTable(t *testing.T, root string) string {
	t.Helper()
	jar, err := ddblocal.JarDir(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	local, err := ddblocal.Start(ctx, jar, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = local.Stop() })
	client, err := store.NewDynamoClient(ctx, store.ClientOptions{Endpoint: local.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	def, err := ddblocal.TableFromTemplate(filepath.Join(root, "template.yaml"), ddblocal.TableLogicalID, "rie-knowledge")
	if err != nil {
		t.Fatal(err)
	}
	if err := ddblocal.CreateTable(ctx, client, def); err != nil {
		t.Fatal(err)
	}
	return local.Endpoint
}

func invoke(t *testing.T, f *fn, payload []byte) reply {
	t.Helper()
	url := "http://" + f.addr + "/2015-03-31/functions/function/invocations"
	var last error
	for range 100 {
		resp, err := http.Post(url, "application/json", bytes.NewReader(payload))
		if err != nil {
			last = err
			time.Sleep(100 * time.Millisecond)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var out reply
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("invoke %s: %d %s\n%s", f.name, resp.StatusCode, body, f.logs)
		}
		return out
	}
	t.Fatalf("the emulator of %s did not answer: %v\n%s", f.name, last, fmt.Sprint(f.logs))
	return reply{}
}
