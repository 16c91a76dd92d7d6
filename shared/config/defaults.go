package config

import (
	"strconv"
	"time"
)

// Defaults of the settings (docs/operations.md's configuration table), each named once: FromEnv
// falls back on them, and code built without a Config (tests, tools, a zero option of an
// adapter) takes them from here.
const (
	DefaultLocalAddr           = "127.0.0.1:3000"
	DefaultProvider            = "demo"
	DefaultTenant              = "northstar-mobility-demo"
	DefaultWorkspace           = "mobilityops"
	DefaultCollection          = "internal-procedures"
	DefaultRAGcoreSourcePrefix = "mobilityops-procedures"
	DefaultRAGcoreTimeout      = 2 * time.Second
	DefaultVerifyConcurrency   = 16
	DefaultVerifyBudget        = 8 * time.Second
	DefaultVerifyNegativeTTL   = 30 * time.Second
	DefaultSidecarEnabled      = false
	DefaultSidecarTimeout      = 1500 * time.Millisecond
	DefaultAuthMode            = "jwt"
	DefaultTraceRetention      = 30 * 24 * time.Hour
	DefaultTableName           = "mobilityops-knowledge"
	DefaultL1Enabled           = true
	DefaultLogLevel            = "info"
	DefaultFunctionName        = "local"
	DefaultDynamoDBTimeout     = 2 * time.Second
	DefaultAWSRegion           = "eu-central-1"
	DefaultTracing             = "xray"
	DefaultOTelTracesExporter  = "otlp"
	// DefaultTraceWriteWait is how long a trace write may hold a response.
	DefaultTraceWriteWait = 250 * time.Millisecond
	// DefaultBreakerFailures and DefaultBreakerCooldown are both circuit breakers' (RAGcore's
	// and the trace store's).
	DefaultBreakerFailures = 5
	DefaultBreakerCooldown = 10 * time.Second
	// DefaultGroundedCosine and DefaultSupportedCosine are the semantic grounded thresholds of
	// a cosine similarity score, calibrated on the evaluation set of eval/ (see
	// docs/retrieval.md): an answering section scores about 0.8, a distractor 0.7 at most, a
	// question no procedure answers below 0.5.
	DefaultGroundedCosine  = 0.70
	DefaultSupportedCosine = 0.70
	// DefaultTimeZone is the zone in which a procedure version's effective date begins.
	DefaultTimeZone = "Europe/Berlin"
	// DefaultUpcomingDays is how far ahead a coming version is announced on a block.
	DefaultUpcomingDays = 30
)

// Defaults maps each environment variable with a default to that default as the environment
// writes it ("2000" for a timeout in milliseconds, "0.70" for a cosine): what
// docs/operations.md, template.yaml's parameters and the Makefile must agree with.
func Defaults() map[string]string {
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	return map[string]string{
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
}
