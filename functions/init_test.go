package functions_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal"
)

// TestInitDurations measures the Init Duration of every function beside the two baselines
// (hello-world, and hello-world linking the mandated X-Ray SDK and AWS clients), under
// aws-lambda-rie: INIT_RUNS cold starts of each, one emulator at a time, the order rotating every
// round so that no function always follows another. With INIT_KNOWLEDGE_DIR set (a corpus folder
// with its prebuilt index.bin), the lookup and status functions also start on that corpus. It
// reports medians and never asserts a time: `make init-duration` runs it with INIT_RUNS; without,
// as in CI, it makes one cold start of each and checks that each reports its initialisation.
func TestInitDurations(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("INIT_RUNS"))
	runs = max(runs, 1)
	root, err := ddblocal.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	rie, bins := built(t, root)
	table := startTable(t, root)
	type target struct {
		name, binary, knowledgeDir string
		env                        []string
	}
	var targets []target
	for _, name := range []string{"hello", "deps", "lookup", "status", "sync"} {
		targets = append(targets, target{name: name, binary: bins[name]})
	}
	// The lookup function under each tracer, as Lambda with active tracing starts it (the
	// daemon's address set): the X-Ray SDK (the default) and OpenTelemetry without an exporter,
	// which Init does not build either way.
	targets = append(targets, target{name: lookupXRay, binary: bins["lookup"], env: []string{"TRACING=xray"}},
		target{name: lookupOTel, binary: bins["lookup"], env: []string{"TRACING=otel", "OTEL_TRACES_EXPORTER=none"}})
	if large := os.Getenv("INIT_KNOWLEDGE_DIR"); large != "" {
		targets = append(targets, target{name: "lookup (INIT_KNOWLEDGE_DIR)", binary: bins["lookup"], knowledgeDir: large},
			target{name: "status (INIT_KNOWLEDGE_DIR)", binary: bins["status"], knowledgeDir: large})
	}
	report := regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)`)
	got := map[string][]float64{}
	for round := range runs {
		for i := range targets {
			tg := targets[(i+round)%len(targets)]
			f, stop := emulate(t, rie, tg.binary, tg.name, slices.Concat(lambdaLikeEnv(), []string{"AUTH_MODE=jwt",
				"TABLE_NAME=rie-knowledge", "DYNAMODB_ENDPOINT=" + table, "AWS_LAMBDA_FUNCTION_NAME=" + filepath.Base(filepath.Dir(tg.binary)),
				"KNOWLEDGE_PROVIDER=demo", "KNOWLEDGE_DIR=" + tg.knowledgeDir, "AWS_XRAY_DAEMON_ADDRESS=127.0.0.1:2000"}, tg.env))
			invoke(t, f, []byte(`{}`))
			stop()
			logs := f.logs
			m := report.FindStringSubmatch(logs.String())
			if m == nil {
				t.Fatalf("%s: no INIT REPORT:\n%s", tg.name, logs)
			}
			ms, err := strconv.ParseFloat(m[1], 64)
			if err != nil || ms <= 0 {
				t.Fatalf("%s: INIT REPORT %q", tg.name, m[0])
			}
			got[tg.name] = append(got[tg.name], ms)
		}
	}
	median := func(xs []float64) float64 { s := slices.Sorted(slices.Values(xs)); return s[len(s)/2] }
	floor := median(got["deps"])
	t.Logf("INIT %d cold starts each: median / 25th percentile / minimum, and the median over the deps floor", runs)
	for _, tg := range targets {
		xs := slices.Sorted(slices.Values(got[tg.name]))
		t.Logf("INIT %-28s %7.2f / %7.2f / %7.2f ms  %5.2fx deps", tg.name, median(xs), xs[len(xs)/4], xs[0], median(xs)/floor)
	}
	t.Logf("INIT lookup, otel over xray: %.2fx (the bound: 1.15x)", median(got[lookupOTel])/median(got[lookupXRay]))
}

// The lookup function's targets under each tracer.
const (
	lookupXRay = "lookup TRACING=xray"
	lookupOTel = "lookup TRACING=otel (none)"
)

// lambdaLikeEnv is this process's environment without what Lambda never sets and what changes a
// cold start: a custom CA bundle (AWS_CA_BUNDLE makes the AWS SDK parse every certificate of it
// while it loads its configuration, 2 ms here) and the other certificate paths of this machine.
func lambdaLikeEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "AWS_CA_BUNDLE" || strings.HasPrefix(name, "SSL_CERT_") || strings.HasSuffix(name, "_CA_BUNDLE") ||
			strings.HasSuffix(name, "_CA_CERTS") || strings.HasSuffix(name, "_CA_CERTS_FILE") || name == "NIX_SSL_CERT_FILE" {
			continue
		}
		out = append(out, kv)
	}
	return out
}
