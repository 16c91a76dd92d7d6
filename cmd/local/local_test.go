package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
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
	"github.com/northstar-mobility/mobilityops-knowledge/internal/procnet"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
)

// TestLocalAPIEndToEnd builds the local API, starts it as `make local` does on a free port and
// talks to it over HTTP like a user with curl would.
func TestLocalAPIEndToEnd(t *testing.T) {
	l := startLocal(t)
	base, cmd, exited, logs := l.base, l.cmd, l.exited, l.logs

	status, body := post(t, base+"/lookup", `{"question":"Die Windschutzscheibe hat einen Riss, wie melde ich den Schaden?","language":"de"}`)
	if status != 200 {
		t.Fatalf("German lookup: %d %s", status, body)
	}
	type lookupResult struct {
		EvidenceState string `json:"evidence_state"`
		Primary       struct {
			DocumentID string `json:"document_id"`
			Source     string `json:"source"`
		} `json:"primary"`
		InvocationID     string `json:"invocation_id"`
		CorrelationID    string `json:"correlation_id"`
		Language         string `json:"language"`
		LanguageDetected bool   `json:"language_detected"`
	}
	var res lookupResult
	mustDecode(t, body, &res)
	if res.Primary.DocumentID != "damage-procedure" || !strings.HasPrefix(res.Primary.Source, "procedures/de/damage-procedure.md#") || res.InvocationID == "" ||
		res.Language != "de" || res.LanguageDetected {
		t.Errorf("German lookup answered %+v", res)
	}

	// Without a language, the question's language is detected and the response says so.
	status, body = post(t, base+"/lookup", `{"question":"Scheibe hat nen Riss, Kunde will wissen ob er weiterfahren darf"}`)
	res = lookupResult{}
	mustDecode(t, body, &res)
	if status != 200 || res.Language != "de" || !res.LanguageDetected || !strings.HasPrefix(res.Primary.Source, "procedures/de/") {
		t.Errorf("lookup without a language: %d %+v", status, res)
	}

	status, body = post(t, base+"/lookup", `{"question":"The battery is at 8 percent and the customer is stuck at a charging station","language":"en","top_k":3}`)
	mustDecode(t, body, &res)
	if status != 200 || res.Primary.DocumentID != "ev-charging" {
		t.Errorf("English lookup: %d %+v", status, res)
	}

	req, _ := http.NewRequest("GET", base+"/invocations/"+res.InvocationID, nil)
	req.Header.Set("X-Actor-Id", "agent-7")
	req.Header.Set("X-Actor-Scope", "knowledge:read")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	trace, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(trace), `"tool":"lookup_knowledge"`) || strings.Contains(string(trace), "stuck at a charging station") {
		t.Errorf("trace: %d %s", resp.StatusCode, trace)
	}

	resp, err = http.Post(base+"/lookup", "application/json", strings.NewReader(`{"question":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("no actor: %d", resp.StatusCode)
	}
	big := `{"question":"` + strings.Repeat("x", 70<<10) + `"}`
	if status, _ := post(t, base+"/lookup", big); status != 413 {
		t.Errorf("oversized body: %d", status)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, logs.String())
		}
	case <-time.After(10 * time.Second):
		t.Error("no exit 10 s after SIGTERM")
	}
	if strings.Contains(logs.String(), "Windschutzscheibe") {
		t.Error("the log holds the question text")
	}
}

// localAPI is a running local API binary.
type localAPI struct {
	base   string
	cmd    *exec.Cmd
	exited chan error
	logs   *testutil.SyncBuffer
}

var (
	buildOnce sync.Once
	buildDir  string // removed by TestMain
	binPath   string
	buildErr  error
)

// startLocal builds the local API once, starts it as `make local` does on a free port with the
// given extra environment, and waits until it answers.
func startLocal(t *testing.T, env ...string) *localAPI {
	t.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "local-api"); buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "local")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	// A port found free can be taken by another process before the binary binds it; then it
	// starts again on another port, up to three times.
	for attempt := 1; ; attempt++ {
		addr := testutil.FreeAddr(t)
		l := &localAPI{base: "http://" + addr + "/api/v1/knowledge", exited: make(chan error, 1), logs: &testutil.SyncBuffer{}}
		l.cmd = exec.Command(binPath)
		l.cmd.Env = append(os.Environ(), "LOCAL_ADDR="+addr, "AUTH_MODE=local-headers", "KNOWLEDGE_PROVIDER=", "DYNAMODB_ENDPOINT=", "KNOWLEDGE_DIR=")
		l.cmd.Env = append(l.cmd.Env, env...)
		l.cmd.Stdout, l.cmd.Stderr = l.logs, l.logs
		child.Prepare(l.cmd)
		if err := l.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { l.exited <- l.cmd.Wait() }()
		t.Cleanup(func() { _ = child.Kill(l.cmd, syscall.SIGKILL) })
		err := waitReady(l.base+"/health", l.cmd.Process.Pid, addr, l.exited, l.logs)
		if err == nil {
			return l
		}
		if !strings.Contains(l.logs.String(), "address already in use") || attempt == 4 {
			t.Fatal(err)
		}
	}
}

// waitReady waits up to 20 s until url answers 200, and says why it did not.
func waitReady(url string, pid int, addr string, exited <-chan error, logs fmt.Stringer) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("the local API exited: %v\n%s", err, logs)
		default:
		}
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("X-Actor-Id", "probe")
		req.Header.Set("X-Actor-Scope", "knowledge:read")
		// Only the binary's own listener counts: a port found free can be handed to another
		// test's server before the binary binds it, and that server may answer as well.
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if held, _ := procnet.ListensOn(pid, addr); resp.StatusCode == 200 && held {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the local API did not answer within 20 s\n%s", logs)
}

func post(t *testing.T, url, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Actor-Id", "agent-7")
	req.Header.Set("X-Actor-Scope", "knowledge:read")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func get(t *testing.T, url, actor, scope string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("X-Actor-Id", actor)
	req.Header.Set("X-Actor-Scope", scope)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func mustDecode(t *testing.T, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
}

// TestListeningIsLoggedAfterTheBind: "local API listening" names an address that accepts
// connections when the line is written, and a port already taken fails the start without it.
func TestListeningIsLoggedAfterTheBind(t *testing.T) {
	startLocal(t) // builds the binary
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	run := func(addr string) (*exec.Cmd, *testutil.SyncBuffer, chan error) {
		logs := &testutil.SyncBuffer{}
		cmd := exec.Command(binPath)
		cmd.Env = append(os.Environ(), "LOCAL_ADDR="+addr, "AUTH_MODE=local-headers", "KNOWLEDGE_PROVIDER=", "DYNAMODB_ENDPOINT=", "KNOWLEDGE_DIR=")
		cmd.Stdout, cmd.Stderr = logs, logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		return cmd, logs, exited
	}

	_, logs, exited := run(taken.Addr().String())
	select {
	case err := <-exited:
		if err == nil || strings.Contains(logs.String(), "local API listening") {
			t.Errorf("a taken port: exit %v, log:\n%s", err, logs)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("a taken port did not fail the start:\n%s", logs)
	}

	_, logs, exited = run(testutil.FreeAddr(t))
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(logs.String(), "local API listening") {
		select {
		case err := <-exited:
			t.Fatalf("exited: %v\n%s", err, logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no listening line:\n%s", logs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	var line struct {
		Addr string `json:"addr"`
	}
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "local API listening") {
			_ = json.Unmarshal([]byte(l), &line)
		}
	}
	host := strings.TrimSuffix(strings.TrimPrefix(line.Addr, "http://"), "/api/v1/knowledge")
	conn, err := net.DialTimeout("tcp", host, time.Second)
	if err != nil {
		t.Fatalf("the listening line names %q, which does not accept: %v", line.Addr, err)
	}
	conn.Close()
}
