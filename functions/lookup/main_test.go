package main

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
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// TestBootstrapUnderRuntimeInterfaceEmulator runs the real bootstrap binary under Amazon's
// Lambda Runtime Interface Emulator and invokes it with every sample event in events/, with
// DynamoDB Local as its table.
func TestBootstrapUnderRuntimeInterfaceEmulator(t *testing.T) {
	root, err := ddblocal.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bootstrap, rie := filepath.Join(dir, "bootstrap"), filepath.Join(dir, "aws-lambda-rie")
	build := exec.Command("go", "build", "-trimpath", "-tags", "lambda.norpc", "-o", bootstrap, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build bootstrap: %v\n%s", err, out)
	}
	// The emulator is pinned as a tool in go.mod.
	if out, err := exec.Command("go", "build", "-o", rie, "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie").CombinedOutput(); err != nil {
		t.Fatalf("build aws-lambda-rie: %v\n%s", err, out)
	}

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
	def, err := store.TableFromTemplate(filepath.Join(root, "template.yaml"), store.TableLogicalID, "rie-knowledge")
	if err != nil {
		t.Fatal(err)
	}
	if err := ddblocal.CreateTable(ctx, client, def); err != nil {
		t.Fatal(err)
	}

	addr := testutil.FreeAddr(t)
	logs := &testutil.SyncBuffer{}
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", addr, bootstrap)
	cmd.Env = append(os.Environ(), "AUTH_MODE=jwt", "TABLE_NAME=rie-knowledge", "DYNAMODB_ENDPOINT="+local.Endpoint,
		"AWS_LAMBDA_FUNCTION_NAME=LookupFunction", "KNOWLEDGE_PROVIDER=demo", "KNOWLEDGE_DIR=")
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})

	want := map[string]int{"lookup.json": 200, "lookup-de.json": 200, "lookup-out-of-domain.json": 200,
		"ask.json": 200, "health.json": 200, "lookup-invalid.json": 400, "lookup-no-scope.json": 403}
	files, _ := filepath.Glob(filepath.Join(root, "events", "*.json"))
	seen := 0
	for _, f := range files {
		status, ok := want[filepath.Base(f)]
		if !ok {
			continue
		}
		seen++
		payload, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		resp := invoke(t, addr, payload, logs)
		if resp.StatusCode != status {
			t.Errorf("%s: status %d, want %d: %s", filepath.Base(f), resp.StatusCode, status, resp.Body)
		}
		if resp.Headers["X-Correlation-Id"] == "" {
			t.Errorf("%s: no X-Correlation-Id", filepath.Base(f))
		}
		if filepath.Base(f) == "lookup.json" {
			var body map[string]any
			if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
				t.Fatal(err)
			}
			if body["correlation_id"] != "evt-lookup" || body["evidence_state"] == nil {
				t.Errorf("lookup body %s", resp.Body)
			}
		}
	}
	if seen != len(want) {
		t.Fatalf("%d of %d sample events found", seen, len(want))
	}
	if m := regexp.MustCompile(`INIT REPORT\(durationMs: [0-9.]+`).FindString(logs.String()); m != "" {
		t.Logf("%s", m)
	}
	if !strings.Contains(logs.String(), `"store":"dynamodb:rie-knowledge"`) {
		t.Errorf("the function did not use DynamoDB:\n%s", logs)
	}
	if n := strings.Count(logs.String(), `"cold_start":true`); n != 1 || !strings.Contains(logs.String(), `"cold_start":false`) {
		t.Errorf("cold_start logged true %d times, want once, then false", n)
	}
	if strings.Contains(logs.String(), "deep scratch") {
		t.Error("the log holds the question text")
	}
	if strings.Contains(logs.String(), "trace write failed") {
		t.Errorf("trace writes failed:\n%s", logs)
	}
}

func invoke(t *testing.T, addr string, payload []byte, logs fmt.Stringer) events.APIGatewayV2HTTPResponse {
	t.Helper()
	url := "http://" + addr + "/2015-03-31/functions/function/invocations"
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
		var out events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("invoke: %d %s\n%s", resp.StatusCode, body, logs)
		}
		return out
	}
	t.Fatalf("the emulator did not answer: %v\n%s", last, logs)
	return events.APIGatewayV2HTTPResponse{}
}
