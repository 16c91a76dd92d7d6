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
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/child"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/procnet"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// fn is one Lambda function under the emulator.
type fn struct {
	name string // directory under functions/
	addr string
	logs *testutil.SyncBuffer
	// exited is closed when the emulator process has ended; pid is its process id.
	exited chan struct{}
	pid    int
	// restart starts the emulator again on fresh ports (see post).
	restart  func() error
	restarts int
}

// maxRestarts bounds how often post starts an emulator again after it lost a port.
const maxRestarts = 3

// lostPort reports whether the emulator ended because one of its ports was taken between
// testutil.FreeAddrs releasing it and the emulator binding it (another test's listener, or a
// client connection's ephemeral port).
func (f *fn) lostPort() bool {
	select {
	case <-f.exited:
		return strings.Contains(f.logs.String(), "address already in use")
	default:
		return false
	}
}

// post sends one invocation to the emulator and returns the HTTP status and body. It sends it
// only once the emulator holds the listening socket of its address, so that no other process
// that was handed the port in the meantime answers in its place; while the emulator is starting
// it waits and retries. When the emulator ended because it lost a port to another process, post
// starts it again on fresh ports (at most maxRestarts times); when it ended for any other
// reason, post says so at once.
func (f *fn) post(payload []byte) (int, []byte, error) {
	var last error
	for range 100 {
		status, body, err := f.postOnce(payload)
		if err == nil {
			return status, body, nil
		}
		last = err
		time.Sleep(100 * time.Millisecond)
		switch {
		case f.lostPort() && f.restarts < maxRestarts:
			f.restarts++
			if err := f.restart(); err != nil {
				return 0, nil, err
			}
		case f.lostPort():
			return 0, nil, fmt.Errorf("the emulator of %s lost its port %d times: %w", f.name, f.restarts+1, last)
		default:
			select {
			case <-f.exited:
				return 0, nil, fmt.Errorf("the emulator of %s ended: %w", f.name, last)
			default:
			}
		}
	}
	return 0, nil, fmt.Errorf("the emulator of %s did not answer: %w", f.name, last)
}

// postOnce sends the invocation once, when the emulator listens on its address.
func (f *fn) postOnce(payload []byte) (int, []byte, error) {
	if held, known := procnet.ListensOn(f.pid, f.addr); !held || !known {
		return 0, nil, fmt.Errorf("the emulator of %s does not listen on %s (known: %v)", f.name, f.addr, known)
	}
	resp, err := http.Post("http://"+f.addr+"/2015-03-31/functions/function/invocations", "application/json", bytes.NewReader(payload))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, body, nil
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

// artifacts are the emulator and every bootstrap, built once for all the tests of the package.
var artifacts struct {
	once sync.Once
	dir  string
	rie  string
	bins map[string]string // hello, deps, lookup, status, sync
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if artifacts.dir != "" {
		_ = os.RemoveAll(artifacts.dir)
	}
	os.Exit(code)
}

// built returns aws-lambda-rie (pinned as a go.mod tool) and the bootstrap of each function and
// of the hello and deps baselines, built as `make build` builds them for this machine's
// architecture, once per test binary.
func built(t *testing.T, root string) (rie string, bins map[string]string) {
	t.Helper()
	artifacts.once.Do(func() {
		if artifacts.dir, artifacts.err = os.MkdirTemp("", "rie-test-"); artifacts.err != nil {
			return
		}
		artifacts.rie = filepath.Join(artifacts.dir, "aws-lambda-rie")
		if out, err := exec.Command("go", "build", "-o", artifacts.rie, "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie").CombinedOutput(); err != nil {
			artifacts.err = fmt.Errorf("build aws-lambda-rie: %v\n%s", err, out)
			return
		}
		artifacts.bins = map[string]string{}
		for _, name := range []string{"hello", "deps", "lookup", "status", "sync"} {
			pkg := "./functions/" + name
			switch name {
			case "hello":
				pkg = "./internal/hellolambda"
			case "deps":
				pkg = "./internal/hellodeps"
			}
			bootstrap := filepath.Join(artifacts.dir, name, "bootstrap")
			build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-tags", "lambda.norpc", "-o", bootstrap, pkg)
			build.Dir = root
			build.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := build.CombinedOutput(); err != nil {
				artifacts.err = fmt.Errorf("build %s: %v\n%s", name, err, out)
				return
			}
			artifacts.bins[name] = bootstrap
		}
	})
	if artifacts.err != nil {
		t.Fatal(artifacts.err)
	}
	return artifacts.rie, artifacts.bins
}

// emulate starts a bootstrap under aws-lambda-rie with env, on two free ports (its invoke API and
// the Runtime API), and returns the function and a stop that kills the emulator and its child.
// With wrap, the emulator's command line follows wrap's (a command that execs its arguments).
func emulate(t *testing.T, rie, bootstrap, name string, env []string, wrap ...string) (*fn, func()) {
	t.Helper()
	f := &fn{name: name}
	var cmd *exec.Cmd
	// kill ends the running emulator and its child, if one was started, and waits for it.
	kill := func() {
		if cmd == nil || cmd.Process == nil {
			return
		}
		_ = child.Kill(cmd, syscall.SIGKILL)
		<-f.exited
	}
	f.restart = func() error {
		kill()
		addrs := testutil.FreeAddrs(t, 2)
		// Each start has its own log, so that what a test reads is the running emulator's.
		f.addr, f.logs, f.exited, f.pid = addrs[0], &testutil.SyncBuffer{}, make(chan struct{}), 0
		args := append(append([]string{}, wrap...), rie, "--runtime-interface-emulator-address", addrs[0], "--runtime-api-address", addrs[1], bootstrap)
		cmd = exec.Command(args[0], args[1:]...)
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = f.logs, f.logs
		child.Prepare(cmd) // the emulator and its bootstrap end with the test binary
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start the emulator of %s: %w", name, err)
		}
		f.pid = cmd.Process.Pid // a wrap execs the emulator in the same process
		go func(c *exec.Cmd, exited chan struct{}) { _ = c.Wait(); close(exited) }(cmd, f.exited)
		return nil
	}
	if err := f.restart(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	return f, func() { once.Do(kill) }
}

func TestBootstrapsUnderRuntimeInterfaceEmulator(t *testing.T) {
	root, err := ddblocal.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	rie, bins := built(t, root)
	table := startTable(t, root)

	// hello is the smallest Go function, built the same way: the baseline for Init Duration;
	// deps is hello linking the X-Ray SDK and the AWS clients every function carries.
	fns := map[string]*fn{}
	for _, name := range []string{"lookup", "status", "sync", "hello", "deps"} {
		f, stop := emulate(t, rie, bins[name], name, append(os.Environ(), "AUTH_MODE=jwt", "TABLE_NAME=rie-knowledge",
			"DYNAMODB_ENDPOINT="+table, "AWS_LAMBDA_FUNCTION_NAME="+name, "KNOWLEDGE_PROVIDER=demo", "KNOWLEDGE_DIR=",
			// The test reads back the trace it wrote; DynamoDB Local on a loaded machine may
			// take longer than the deployed bounds (the guard's own tests cover them).
			ddblocal.TimeoutEnv[0], ddblocal.TimeoutEnv[1]))
		t.Cleanup(stop)
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
		// The uptime probe, as the gateway delivers it (the route has no authorizer): the status alone.
		{"status", "health.json", 200, func(t *testing.T, b map[string]any, _ reply) {
			if len(b) != 2 || b["status"] != "ok" || b["correlation_id"] != "evt-health" {
				t.Errorf("health body %v", b)
			}
		}},
		{"status", "status.json", 200, func(t *testing.T, b map[string]any, _ reply) {
			if b["source_document_count"] != 11.0 || b["document_count"] != 11.0 || b["statistics_state"] != "verified" ||
				b["reported_synced_document_count"] != nil || b["last_sync_at"] != nil {
				t.Errorf("first status %v", b)
			}
		}},
		{"status", "status-de.json", 200, nil},
		// Scopes that the token holds as an array, which API Gateway flattens to "[a b]".
		{"status", "status-scope-array.json", 200, nil},
		{"status", "status-bad-language.json", 400, nil},
		{"sync", "sync.json", 200, func(t *testing.T, b map[string]any, _ reply) {
			if res, _ := b["results"].([]any); len(res) != 2 {
				t.Errorf("sync body %v", b)
			}
		}},
		{"sync", "sync-no-scope.json", 403, nil},
		{"sync", "sync-scp-array.json", 200, nil},
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
	// The runtime names every invocation: each request line carries its request id.
	if logs := fns["lookup"].logs.String(); !strings.Contains(logs, `"request_id":"`) || strings.Contains(logs, `"request_id":""`) {
		t.Errorf("lookup's request lines lack the invocation's request id:\n%s", logs)
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
	status, body, err := f.post(payload)
	if err != nil {
		t.Fatalf("%v\n%s", err, f.logs)
	}
	var out reply
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("invoke %s: %d %s\n%s", f.name, status, body, f.logs)
	}
	return out
}
