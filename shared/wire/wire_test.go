package wire_test

import (
	"context"
	"io"
	"runtime/debug"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/wire"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/wire/sidecarwire"
)

// TestSidecarHealthAgreesWithTheSidecar: the status function reports the sidecar's state without
// building it; that state is the one the lookup function's sidecar reaches.
func TestSidecarHealthAgreesWithTheSidecar(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_REGION", "eu-central-1")
	tests := []struct {
		name string
		env  map[string]string
		want domain.SidecarState
	}{
		{"off", map[string]string{"BEDROCK_KNOWLEDGE_BASE_ID": "KB12345678"}, "disabled"},
		{"on", map[string]string{"SIDECAR_ENABLED": "true", "BEDROCK_KNOWLEDGE_BASE_ID": "KB12345678"}, "ok"},
		{"no knowledge base", map[string]string{"SIDECAR_ENABLED": "true"}, "failed"},
		{"malformed knowledge base", map[string]string{"SIDECAR_ENABLED": "true", "BEDROCK_KNOWLEDGE_BASE_ID": "kb/../x"}, "failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.FromEnv(func(k string) string { return tc.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			p, err := wire.New(context.Background(), cfg, io.Discard, wire.Needs{})
			if err != nil {
				t.Fatal(err)
			}
			_, built := sidecarwire.New(context.Background(), p)
			if got := p.SidecarHealth(); got != built || got.Status != tc.want {
				t.Errorf("health %+v, sidecar built %+v, want status %s", got, built, tc.want)
			}
		})
	}
}

// TestColdStartPausesTheCollector: under a memory limit (as in Lambda) the collector is off
// while the parts are built and back to its setting once the function says it is initialised;
// without a limit it is left alone.
func TestColdStartPausesTheCollector(t *testing.T) {
	gcPercent := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, memory := range []string{"512", ""} {
		cfg, err := config.FromEnv(func(k string) string {
			return map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": memory}[k]
		})
		if err != nil {
			t.Fatal(err)
		}
		p, err := wire.New(context.Background(), cfg, io.Discard, wire.Needs{})
		if err != nil {
			t.Fatal(err)
		}
		want := -1
		if memory == "" {
			want = 100
		}
		if got := gcPercent(); got != want {
			t.Errorf("memory %q: GC percent %d while initialising, want %d", memory, got, want)
		}
		p.Initialised(context.Background(), "disabled")
		if got := gcPercent(); got != 100 {
			t.Errorf("memory %q: GC percent %d once initialised, want 100", memory, got)
		}
	}
}
