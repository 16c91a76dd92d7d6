package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/child"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/mcp"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// tsPlan is what tools/mcp-client/check.mjs is told to do (see the script).
type tsPlan struct {
	Headers map[string]string `json:"headers"`
	Tools   []string          `json:"tools"`
	Calls   []tsCall          `json:"calls"`
}

type tsCall struct {
	Tool          string             `json:"tool"`
	Arguments     map[string]any     `json:"arguments"`
	EvidenceState port.EvidenceState `json:"evidence_state,omitempty"`
	ErrorCode     string             `json:"error_code,omitempty"`
	SameAs        string             `json:"same_as,omitempty"`
	Offers        string             `json:"offers,omitempty"`
	Basis         string             `json:"basis,omitempty"`
}

// tsSeen is what the script reports.
type tsSeen struct {
	Server    string   `json:"server"`
	Tools     []string `json:"tools"`
	Subscribe int      `json:"subscribe"`
	Calls     []struct {
		Tool          string `json:"tool"`
		Validated     bool   `json:"validated"`
		EvidenceState string `json:"evidence_state"`
		ErrorCode     string `json:"error_code"`
		SameAs        string `json:"same_as"`
		Offers        string `json:"offers"`
	} `json:"calls"`
}

// runTSClient runs the TypeScript SDK's client (tools/mcp-client, installed by `make deps`) with
// plan against the API at base. Without Node.js it skips, except under CI, where it fails.
func runTSClient(t *testing.T, base string, plan tsPlan) tsSeen {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("Node.js is needed for the TypeScript MCP client: %v", err)
		}
		t.Skipf("no Node.js to run the TypeScript MCP client: %v", err)
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "tools", "mcp-client"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the TypeScript MCP SDK is not installed: run `make deps` (npm ci in tools/mcp-client): %v", err)
	}
	raw, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "check.mjs", base, string(raw))
	cmd.Dir = dir
	// Node and anything it starts end with this test binary, and at the deadline as a group.
	child.Prepare(cmd)
	cmd.Cancel = func() error { return child.Kill(cmd, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) || ctx.Err() != nil {
			t.Fatalf("the TypeScript client failed (%v):\n%s%s", err, stderr.String(), stdout.String())
		}
		t.Fatal(err)
	}
	var seen tsSeen
	if err := json.Unmarshal(stdout.Bytes(), &seen); err != nil {
		t.Fatalf("the TypeScript client's report %q: %v", stdout.String(), err)
	}
	return seen
}

var localActor = map[string]string{"X-Actor-Id": "agent-ts", "X-Actor-Scope": "knowledge:read"}

// The official TypeScript SDK's client, with its output-schema validation, initialises, lists
// the tools and calls each of them for every kind of result the demo provider gives (grounded,
// insufficient, a tool error); lookup_knowledge's structured content equals POST /lookup's body
// for the same question, ids aside; a resource subscription is refused at once.
func TestMCPTypeScriptClient(t *testing.T) {
	a := newApp(t, map[string]string{"AUTH_MODE": "local-headers"})
	srv := httptest.NewServer(a.Handler.HTTP(10 * time.Second))
	t.Cleanup(srv.Close)
	plan := tsPlan{Headers: localActor, Tools: []string{lookup.ToolLookup, mcp.ToolAsk, mcp.ToolStatus}, Calls: []tsCall{
		{Tool: lookup.ToolLookup, Arguments: map[string]any{"question": grounded, "language": "en", "top_k": 3},
			EvidenceState: port.StateGrounded, SameAs: "/lookup"},
		{Tool: lookup.ToolLookup, Arguments: map[string]any{"question": "Die Windschutzscheibe hat einen Riss, wie melde ich den Schaden?"},
			SameAs: "/lookup"},
		{Tool: lookup.ToolLookup, Arguments: map[string]any{"question": insufficient}, EvidenceState: port.StateInsufficient, SameAs: "/lookup"},
		{Tool: mcp.ToolAsk, Arguments: map[string]any{"question": grounded, "language": "en"}, EvidenceState: port.StateGrounded},
		{Tool: mcp.ToolAsk, Arguments: map[string]any{"question": insufficient}, EvidenceState: port.StateInsufficient},
		{Tool: mcp.ToolStatus, Arguments: map[string]any{"language": "de"}},
		{Tool: mcp.ToolStatus, Arguments: map[string]any{}},
		{Tool: lookup.ToolLookup, Arguments: map[string]any{"question": grounded, "language": "fr"}, ErrorCode: "unsupported_language"},
		// The clarifying turn: a question whose evidence does not decide, the clarification's
		// option sent back as procedure through both tools, and an id that is no procedure.
		{Tool: lookup.ToolLookup, Arguments: map[string]any{"question": clarified, "top_k": 2}, EvidenceState: port.StateInsufficient,
			Offers: "breakdown-assistance", SameAs: "/lookup"},
		{Tool: lookup.ToolLookup, Arguments: map[string]any{"question": clarified, "top_k": 2, "procedure": "breakdown-assistance"},
			EvidenceState: port.StateGrounded, Basis: "confirmed", SameAs: "/lookup"},
		{Tool: mcp.ToolAsk, Arguments: map[string]any{"question": clarified, "procedure": "breakdown-assistance"},
			EvidenceState: port.StateGrounded, Basis: "confirmed"},
		{Tool: lookup.ToolLookup, Arguments: map[string]any{"question": clarified, "procedure": "battery-service"}, ErrorCode: "invalid_request"},
	}}
	seen := runTSClient(t, srv.URL, plan)
	if seen.Server != "mobilityops-knowledge" || len(seen.Calls) != len(plan.Calls) || seen.Subscribe != -32601 {
		t.Fatalf("the TypeScript client saw %+v", seen)
	}
	for i, c := range seen.Calls {
		if want := plan.Calls[i]; c.Tool != want.Tool || want.ErrorCode == "" && !c.Validated || c.SameAs != want.SameAs || c.Offers != want.Offers {
			t.Errorf("call %d: %+v, planned %+v", i, c, want)
		}
	}
}

// With RAGcore unreachable the TypeScript client accepts the unavailable results of every tool.
func TestMCPTypeScriptClientUnavailable(t *testing.T) {
	a := newApp(t, map[string]string{"KNOWLEDGE_PROVIDER": "ragcore", "RAGCORE_BASE_URL": "http://" + testutil.ClosedAddr(t),
		"RAGCORE_TOKEN": "t", "AUTH_MODE": "local-headers"})
	srv := httptest.NewServer(a.Handler.HTTP(10 * time.Second))
	t.Cleanup(srv.Close)
	plan := tsPlan{Headers: localActor, Tools: []string{lookup.ToolLookup, mcp.ToolAsk, mcp.ToolStatus}, Calls: []tsCall{
		{Tool: lookup.ToolLookup, Arguments: map[string]any{"question": insufficient, "language": "en"}, EvidenceState: port.StateUnavailable, SameAs: "/lookup"},
		{Tool: mcp.ToolAsk, Arguments: map[string]any{"question": grounded, "language": "en"}, EvidenceState: port.StateUnavailable},
		{Tool: mcp.ToolStatus, Arguments: map[string]any{"language": "en"}},
	}}
	if seen := runTSClient(t, srv.URL, plan); len(seen.Calls) != len(plan.Calls) {
		t.Fatalf("the TypeScript client saw %+v", seen)
	}
}
