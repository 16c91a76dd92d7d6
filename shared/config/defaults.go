package config

import "time"

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
