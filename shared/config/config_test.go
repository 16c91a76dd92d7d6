package config

import (
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaults(t *testing.T) {
	c, err := FromEnv(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.LocalAddr != "127.0.0.1:3000" || c.Provider != "demo" || c.AuthMode != "jwt" || c.Tenant != "northstar-mobility-demo" ||
		c.Workspace != "mobilityops" || c.Collection != "internal-procedures" || c.RAGcoreTimeout != 2*time.Second ||
		c.VerifyConcurrency != 16 || c.TraceRetention != 30*24*time.Hour || !c.L1Enabled || c.SidecarEnabled {
		t.Fatalf("defaults %+v", c)
	}
	if c.UseDynamoDB() {
		t.Error("outside Lambda without DYNAMODB_ENDPOINT the in-memory store is the default")
	}
}

func TestStoreChoice(t *testing.T) {
	c, _ := FromEnv(env(map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001"}))
	if !c.UseDynamoDB() {
		t.Error("in Lambda records go to DynamoDB")
	}
	c, _ = FromEnv(env(map[string]string{"DYNAMODB_ENDPOINT": "http://127.0.0.1:8000/"}))
	if !c.UseDynamoDB() || c.DynamoDBEndpoint != "http://127.0.0.1:8000" {
		t.Errorf("endpoint %q", c.DynamoDBEndpoint)
	}
}

func TestEveryBadVariableIsReported(t *testing.T) {
	_, err := FromEnv(env(map[string]string{
		"KNOWLEDGE_PROVIDER":   "openai",
		"AUTH_MODE":            "none",
		"RAGCORE_TIMEOUT_MS":   "fast",
		"VERIFY_CONCURRENCY":   "1000",
		"SIDECAR_ENABLED":      "maybe",
		"DYNAMODB_ENDPOINT":    "localhost:8000",
		"TRACE_RETENTION_DAYS": "0",
	}))
	if err == nil {
		t.Fatal("bad configuration accepted")
	}
	for _, name := range []string{"KNOWLEDGE_PROVIDER", "AUTH_MODE", "RAGCORE_TIMEOUT_MS", "VERIFY_CONCURRENCY",
		"SIDECAR_ENABLED", "DYNAMODB_ENDPOINT", "TRACE_RETENTION_DAYS"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
}

func TestRAGcoreNeedsURLAndToken(t *testing.T) {
	_, err := FromEnv(env(map[string]string{"KNOWLEDGE_PROVIDER": "ragcore"}))
	if err == nil || !strings.Contains(err.Error(), "RAGCORE_BASE_URL") || !strings.Contains(err.Error(), "RAGCORE_TOKEN_PARAMETER") {
		t.Fatalf("err = %v", err)
	}
	for _, tok := range []map[string]string{{"RAGCORE_TOKEN": "t"}, {"RAGCORE_TOKEN_PARAMETER": "/mobilityops/ragcore-token"}} {
		vars := map[string]string{"KNOWLEDGE_PROVIDER": "ragcore", "RAGCORE_BASE_URL": "https://ragcore.example/"}
		for k, v := range tok {
			vars[k] = v
		}
		c, err := FromEnv(env(vars))
		if err != nil {
			t.Fatalf("%v: %v", tok, err)
		}
		if c.Provider != "ragcore" || c.RAGcoreBaseURL != "https://ragcore.example" {
			t.Errorf("config = %+v", c)
		}
	}
}

func TestTokenIsNeverInErrors(t *testing.T) {
	_, err := FromEnv(env(map[string]string{"RAGCORE_TOKEN": "s3cr3t-token", "RAGCORE_BASE_URL": "not a url s3cr3t-token"}))
	if err == nil || strings.Contains(err.Error(), "s3cr3t-token") {
		t.Fatalf("err = %v", err)
	}
}

func TestLocalHeadersAreRefusedInDeployedLambda(t *testing.T) {
	lambda := map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001", "AUTH_MODE": "local-headers"}
	if _, err := FromEnv(env(lambda)); err == nil || !strings.Contains(err.Error(), "AUTH_MODE") {
		t.Fatalf("local-headers accepted in Lambda: %v", err)
	}
	lambda["AWS_SAM_LOCAL"] = "true"
	if c, err := FromEnv(env(lambda)); err != nil || c.AuthMode != "local-headers" {
		t.Fatalf("sam local: %v", err)
	}
	if _, err := FromEnv(env(map[string]string{"AUTH_MODE": "local-headers"})); err != nil {
		t.Fatalf("outside Lambda: %v", err)
	}
}

func TestSemanticThresholds(t *testing.T) {
	c, err := FromEnv(env(nil))
	if err != nil || c.GroundedCosine != 0.70 || c.SupportedCosine != 0.70 {
		t.Fatalf("defaults %v %v: %v", c.GroundedCosine, c.SupportedCosine, err)
	}
	c, err = FromEnv(env(map[string]string{"L1_GROUNDED_COSINE": "0.7", "L1_SUPPORTED_COSINE": "0.6"}))
	if err != nil || c.GroundedCosine != 0.7 || c.SupportedCosine != 0.6 {
		t.Fatalf("set %v %v: %v", c.GroundedCosine, c.SupportedCosine, err)
	}
	for _, bad := range []map[string]string{
		{"L1_GROUNDED_COSINE": "high"},
		{"L1_GROUNDED_COSINE": "1.5"},
		{"L1_GROUNDED_COSINE": "0.5", "L1_SUPPORTED_COSINE": "0.6"},
	} {
		if _, err := FromEnv(env(bad)); err == nil || !strings.Contains(err.Error(), "COSINE") {
			t.Errorf("%v: err = %v", bad, err)
		}
	}
}

func TestBreakerAndNegativeCacheSettings(t *testing.T) {
	c, err := FromEnv(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.RAGcoreBreakerFailures != 5 || c.RAGcoreBreakerCooldown != 10*time.Second || c.VerifyNegativeTTL != 30*time.Second {
		t.Errorf("defaults: failures %d, cool-down %v, negative TTL %v", c.RAGcoreBreakerFailures, c.RAGcoreBreakerCooldown, c.VerifyNegativeTTL)
	}
	c, err = FromEnv(env(map[string]string{"RAGCORE_BREAKER_FAILURES": "3", "RAGCORE_BREAKER_COOLDOWN_MS": "2500",
		"VERIFY_NEGATIVE_TTL_MS": "0"}))
	if err != nil || c.RAGcoreBreakerFailures != 3 || c.RAGcoreBreakerCooldown != 2500*time.Millisecond || c.VerifyNegativeTTL != 0 {
		t.Errorf("set: %+v, %v", c, err)
	}
	_, err = FromEnv(env(map[string]string{"RAGCORE_BREAKER_FAILURES": "0", "RAGCORE_BREAKER_COOLDOWN_MS": "soon",
		"VERIFY_NEGATIVE_TTL_MS": "-1"}))
	for _, want := range []string{`RAGCORE_BREAKER_FAILURES="0": must be an integer from 1 to 1000`,
		`RAGCORE_BREAKER_COOLDOWN_MS="soon": must be an integer from 100 to 600000`,
		`VERIFY_NEGATIVE_TTL_MS="-1": must be an integer from 0 to 300000`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %s", err, want)
		}
	}
}

func TestTraceStoreGuardSettings(t *testing.T) {
	c, err := FromEnv(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.TraceWriteWait != 250*time.Millisecond || c.DynamoDBBreakerFailures != 5 || c.DynamoDBBreakerCooldown != 10*time.Second {
		t.Errorf("defaults: wait %v, failures %d, cool-down %v", c.TraceWriteWait, c.DynamoDBBreakerFailures, c.DynamoDBBreakerCooldown)
	}
	c, err = FromEnv(env(map[string]string{"DYNAMODB_TRACE_WAIT_MS": "40", "DYNAMODB_BREAKER_FAILURES": "2", "DYNAMODB_BREAKER_COOLDOWN_MS": "1500"}))
	if err != nil || c.TraceWriteWait != 40*time.Millisecond || c.DynamoDBBreakerFailures != 2 || c.DynamoDBBreakerCooldown != 1500*time.Millisecond {
		t.Errorf("set: %+v, %v", c, err)
	}
	_, err = FromEnv(env(map[string]string{"DYNAMODB_TRACE_WAIT_MS": "0", "DYNAMODB_BREAKER_FAILURES": "x", "DYNAMODB_BREAKER_COOLDOWN_MS": "99"}))
	for _, want := range []string{`DYNAMODB_TRACE_WAIT_MS="0": must be an integer from 10 to 30000`,
		`DYNAMODB_BREAKER_FAILURES="x": must be an integer from 1 to 1000`,
		`DYNAMODB_BREAKER_COOLDOWN_MS="99": must be an integer from 100 to 600000`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %s", err, want)
		}
	}
}

func TestMemoryLimitFollowsTheFunctionsMemory(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want int64
	}{
		{nil, 0},
		{map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256"}, 256 << 20 * 9 / 10},
		{map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256", "GOMEMLIMIT": "200MiB"}, 0},
	} {
		c, err := FromEnv(env(tc.env))
		if err != nil || c.MemoryLimitBytes != tc.want {
			t.Errorf("%v: limit %d, %v; want %d", tc.env, c.MemoryLimitBytes, err, tc.want)
		}
	}
}

func TestVersionSettings(t *testing.T) {
	c, err := FromEnv(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.TimeZone.String() != "Europe/Berlin" || c.UpcomingDays != 30 {
		t.Errorf("defaults: zone %s, upcoming days %d", c.TimeZone, c.UpcomingDays)
	}
	c, err = FromEnv(env(map[string]string{"KNOWLEDGE_TIME_ZONE": "America/New_York", "KNOWLEDGE_UPCOMING_DAYS": "0"}))
	if err != nil || c.TimeZone.String() != "America/New_York" || c.UpcomingDays != 0 {
		t.Errorf("zone %v, days %d, err %v", c.TimeZone, c.UpcomingDays, err)
	}
	for _, bad := range []map[string]string{
		{"KNOWLEDGE_TIME_ZONE": "Mars/Olympus"},
		{"KNOWLEDGE_TIME_ZONE": "Local"},
		{"KNOWLEDGE_UPCOMING_DAYS": "-1"},
		{"KNOWLEDGE_UPCOMING_DAYS": "ten"},
	} {
		_, err := FromEnv(env(bad))
		for name := range bad {
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%v: error %v does not name %s", bad, err, name)
			}
		}
	}
}

func TestTracing(t *testing.T) {
	c, err := FromEnv(env(map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}))
	if err != nil || c.Tracing != "xray" || c.OTelTracesExporter != "" {
		t.Fatalf("default: %q %q %v (OTEL_* is read with TRACING=otel only)", c.Tracing, c.OTelTracesExporter, err)
	}
	c, err = FromEnv(env(map[string]string{"TRACING": "otel"}))
	if err != nil || c.Tracing != "otel" || c.OTelTracesExporter != "otlp" {
		t.Fatalf("otel: %q %q %v", c.Tracing, c.OTelTracesExporter, err)
	}
	c, err = FromEnv(env(map[string]string{"TRACING": "otel", "OTEL_TRACES_EXPORTER": "console",
		"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}))
	if err != nil || c.OTelTracesExporter != "console" {
		t.Fatalf("console: %q %v", c.OTelTracesExporter, err)
	}
	for _, tc := range []struct {
		vars map[string]string
		name string
	}{
		{map[string]string{"TRACING": "jaeger"}, `TRACING="jaeger": must be one of xray, otel, off`},
		{map[string]string{"TRACING": "otel", "OTEL_TRACES_EXPORTER": "zipkin"}, `OTEL_TRACES_EXPORTER="zipkin": must be one of otlp, console, none`},
		{map[string]string{"TRACING": "otel", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, `OTEL_EXPORTER_OTLP_PROTOCOL="grpc": only http/protobuf`},
		{map[string]string{"TRACING": "otel", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="grpc"`},
	} {
		if _, err := FromEnv(env(tc.vars)); err == nil || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%v: err = %v, want %s", tc.vars, err, tc.name)
		}
	}
}
