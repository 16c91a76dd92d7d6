package config

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestOperationsTableShowsTheDefaults reads the configuration table of docs/operations.md and
// compares each variable's documented default with the one named in defaults.go.
func TestOperationsTableShowsTheDefaults(t *testing.T) {
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	want := map[string]string{
		"LOCAL_ADDR":                   DefaultLocalAddr,
		"KNOWLEDGE_PROVIDER":           DefaultProvider,
		"KNOWLEDGE_TIME_ZONE":          DefaultTimeZone,
		"KNOWLEDGE_UPCOMING_DAYS":      strconv.Itoa(DefaultUpcomingDays),
		"KNOWLEDGE_TENANT":             DefaultTenant,
		"KNOWLEDGE_WORKSPACE":          DefaultWorkspace,
		"KNOWLEDGE_COLLECTION":         DefaultCollection,
		"TABLE_NAME":                   DefaultTableName,
		"DYNAMODB_TIMEOUT_MS":          ms(DefaultDynamoDBTimeout),
		"DYNAMODB_TRACE_WAIT_MS":       ms(DefaultTraceWriteWait),
		"DYNAMODB_BREAKER_FAILURES":    strconv.Itoa(DefaultBreakerFailures),
		"DYNAMODB_BREAKER_COOLDOWN_MS": ms(DefaultBreakerCooldown),
		"TRACE_RETENTION_DAYS":         strconv.Itoa(int(DefaultTraceRetention / (24 * time.Hour))),
		"RAGCORE_SOURCE_PREFIX":        DefaultRAGcoreSourcePrefix,
		"RAGCORE_TIMEOUT_MS":           ms(DefaultRAGcoreTimeout),
		"VERIFY_CONCURRENCY":           strconv.Itoa(DefaultVerifyConcurrency),
		"VERIFY_BUDGET_MS":             ms(DefaultVerifyBudget),
		"VERIFY_NEGATIVE_TTL_MS":       ms(DefaultVerifyNegativeTTL),
		"RAGCORE_BREAKER_FAILURES":     strconv.Itoa(DefaultBreakerFailures),
		"RAGCORE_BREAKER_COOLDOWN_MS":  ms(DefaultBreakerCooldown),
		"AUTH_MODE":                    DefaultAuthMode,
		"RETRIEVAL_L1_ENABLED":         strconv.FormatBool(DefaultL1Enabled),
		"L1_GROUNDED_COSINE":           strconv.FormatFloat(DefaultGroundedCosine, 'f', 2, 64),
		"L1_SUPPORTED_COSINE":          strconv.FormatFloat(DefaultSupportedCosine, 'f', 2, 64),
		"LOG_LEVEL":                    DefaultLogLevel,
		"TRACING":                      DefaultTracing,
		"OTEL_TRACES_EXPORTER":         DefaultOTelTracesExporter,
		"SIDECAR_ENABLED":              strconv.FormatBool(DefaultSidecarEnabled),
		"SIDECAR_TIMEOUT_MS":           ms(DefaultSidecarTimeout),
		"AWS_REGION":                   DefaultAWSRegion,
	}
	documented := operationsDefaults(t)
	for name, def := range want {
		if got, ok := documented[name]; !ok {
			t.Errorf("docs/operations.md: %s has no default in the configuration table, want `%s`", name, def)
		} else if got != def {
			t.Errorf("docs/operations.md: %s defaults to `%s`, defaults.go to %q", name, got, def)
		}
	}
}

// operationsDefaults maps each variable of the configuration table to the first code span of its
// default cell; a row naming several variables gives them the cell's code spans in order.
func operationsDefaults(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	code := regexp.MustCompile("`([^`]*)`")
	out := map[string]string{}
	in := false
	for line := range strings.Lines(string(raw)) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "| name | meaning | default |"):
			in = true
			continue
		case in && !strings.HasPrefix(line, "|"):
			return out
		case !in || strings.HasPrefix(line, "|---"):
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 5 {
			continue
		}
		names, defs := code.FindAllStringSubmatch(cells[1], -1), code.FindAllStringSubmatch(cells[3], -1)
		for i := 0; i < len(names) && i < len(defs); i++ {
			out[names[i][1]] = defs[i][1]
		}
	}
	if !in {
		t.Fatal("docs/operations.md has no configuration table (| name | meaning | default | ...)")
	}
	return out
}
