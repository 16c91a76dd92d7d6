package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
)

func TestServesLogsAndStops(t *testing.T) {
	t.Parallel()
	const token = "cmd-secret-token"
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stdoutR, stdoutW := io.Pipe()
	var stderr testutil.SyncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-token", token, "-skip", "en/lost-and-found"}, stdoutW, &stderr)
		stdoutW.Close()
	}()

	line, err := bufio.NewReader(stdoutR).ReadString('\n')
	if err != nil {
		t.Fatalf("no listening line (stderr %s): %v", stderr.String(), err)
	}
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "ragcore-fake listening on ")
	if !ok || !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("listening line %q", line)
	}
	go func() { _, _ = io.Copy(io.Discard, stdoutR) }()

	get := func(path string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("X-RAGcore-Tenant", "northstar-mobility-demo")
		req.Header.Set("X-RAGcore-Workspace", "mobilityops")
		req.Header.Set("X-Actor-Id", "agent-1")
		req.Header.Set("X-Actor-Scope", "fleet-ops")
		req.Header.Set("X-Correlation-Id", "corr-cmd")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := get("/v1/health"); status != 200 || body != `{"status":"ok"}` {
		t.Errorf("health: %d %s", status, body)
	}
	if _, body := get("/v1/documents?source_id=mobilityops-procedures-en&external_id=damage-procedure"); !strings.Contains(body, `"status":"published"`) {
		t.Errorf("preloaded document: %s", body)
	}
	if _, body := get("/v1/documents?source_id=mobilityops-procedures-en&external_id=lost-and-found"); body != `{"documents":[]}` {
		t.Errorf("skipped document: %s", body)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not stop after the context ended")
	}

	logs := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(logs) != 3 {
		t.Fatalf("%d log lines, want one per request:\n%s", len(logs), stderr.String())
	}
	for _, l := range logs {
		var entry map[string]any
		if err := json.Unmarshal([]byte(l), &entry); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		for _, k := range []string{"method", "path", "status", "duration_ms", "correlation_id"} {
			if _, ok := entry[k]; !ok {
				t.Errorf("log line %q lacks %s", l, k)
			}
		}
		if entry["correlation_id"] != "corr-cmd" || entry["status"] != float64(200) {
			t.Errorf("log line %q", l)
		}
	}
	if out := stderr.String(); strings.Contains(out, token) || strings.Contains(out, "source_id=") {
		t.Errorf("the log holds the token or a query string:\n%s", out)
	}
}

func TestBadFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"empty token", []string{"-token", ""}, "-token"},
		{"error rate above 1", []string{"-error-rate", "1.5"}, "-error-rate"},
		{"fail status not an error", []string{"-fail-status", "200"}, "-fail-status"},
		{"negative latency", []string{"-latency", "-1s"}, "-latency"},
		{"stray argument", []string{"serve"}, "unexpected"},
		{"unknown skip", []string{"-skip", "en/no-such-procedure"}, "-skip"},
		{"skip without language", []string{"-skip", "damage-procedure"}, "-skip"},
		{"missing knowledge dir", []string{"-knowledge-dir", "/nonexistent/knowledge"}, "knowledge dir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := run(t.Context(), append([]string{"-addr", "127.0.0.1:0"}, tt.args...), io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one about %s", err, tt.want)
			}
		})
	}
}
