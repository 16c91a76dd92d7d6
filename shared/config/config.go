// Package config is the service's configuration: one typed struct, read from the environment once
// at start-up and validated there, with one clear message per bad variable. Nothing else reads
// the environment.
package config

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	// The zone database, so that KNOWLEDGE_TIME_ZONE resolves on a runtime without one.
	_ "time/tzdata"
)

// Config holds every setting of the configuration table of docs/operations.md.
type Config struct {
	LocalAddr             string
	Provider              string // "demo" or "ragcore"
	KnowledgeDir          string // empty: the embedded corpus
	Tenant                string
	Workspace             string
	Collection            string
	RAGcoreBaseURL        string
	RAGcoreToken          string
	RAGcoreTokenParameter string
	RAGcoreSourcePrefix   string
	RAGcoreTimeout        time.Duration
	VerifyConcurrency     int
	// VerifyBudget bounds one verification of a language's sources (cut further to the Lambda
	// invocation's deadline).
	VerifyBudget     time.Duration
	DynamoDBEndpoint string
	SidecarEnabled   bool
	// SidecarTimeout bounds the sidecar's part in a lookup.
	SidecarTimeout       time.Duration
	BedrockKnowledgeBase string
	BedrockEndpoint      string
	AuthMode             string // "jwt" or "local-headers"
	TraceRetention       time.Duration
	TableName            string
	L1Enabled            bool
	LogLevel             string
	// FunctionName is the Lambda function's name (AWS_LAMBDA_FUNCTION_NAME), "local" outside Lambda.
	FunctionName string
	// MemoryLimitBytes is the Go runtime's soft memory limit to set at start: 90 % of the
	// function's memory (AWS_LAMBDA_FUNCTION_MEMORY_SIZE, in MB), so that the collector runs
	// before the function would run out of it; 0 outside Lambda, or when GOMEMLIMIT sets one.
	MemoryLimitBytes int64
	// InLambda is true inside the Lambda runtime (deployed, sam local or the emulator).
	InLambda bool
	// DynamoDBTimeout bounds every DynamoDB call, retries included.
	DynamoDBTimeout time.Duration
	// AWSRegion is the region for AWS clients when the SDK's own configuration names none.
	AWSRegion string
	// XRayDaemonAddress is set by Lambda when active tracing is on; empty means no X-Ray SDK
	// tracing.
	XRayDaemonAddress string
	// Tracing is TRACING: "xray" (the X-Ray SDK), "otel" (OpenTelemetry) or "off".
	Tracing string
	// OTelTracesExporter is OTEL_TRACES_EXPORTER, read with TRACING=otel only: "otlp" (over
	// HTTP, to the collector layer), "console" or "none". The OpenTelemetry SDK reads the other
	// standard OTEL_* variables itself (endpoint, headers, sampler, batching, resource).
	OTelTracesExporter string
	// GroundedCosine and SupportedCosine are the semantic grounded thresholds of a cosine
	// similarity L1 score: grounded on its own at GroundedCosine, with matching words from
	// SupportedCosine on.
	GroundedCosine, SupportedCosine float64

	// RAGcoreBreakerFailures is the number of consecutive failed RAGcore calls (timeouts,
	// unreachable, 5xx) that opens the circuit breaker.
	RAGcoreBreakerFailures int
	// RAGcoreBreakerCooldown is how long the open breaker fails calls at once before it lets
	// one probe through.
	RAGcoreBreakerCooldown time.Duration
	// TraceWriteWait is how long a trace write to DynamoDB may hold a response; a write still
	// running then goes on in the background and the trace is logged for replay.
	TraceWriteWait time.Duration
	// DynamoDBBreakerFailures is the number of consecutive failed trace writes or reads
	// (errors, or writes that outlived TraceWriteWait) that opens the trace store's breaker;
	// DynamoDBBreakerCooldown is how long it then refuses them before one probe.
	DynamoDBBreakerFailures int
	DynamoDBBreakerCooldown time.Duration
	// VerifyNegativeTTL is how long a verification that did not complete is reused by /status
	// before RAGcore is asked again; 0 turns this negative cache off.
	VerifyNegativeTTL time.Duration
	// TimeZone is the zone in which a procedure version's effective date begins
	// (KNOWLEDGE_TIME_ZONE); UpcomingDays is how far ahead a coming version is announced on a
	// block (KNOWLEDGE_UPCOMING_DAYS).
	TimeZone     *time.Location
	UpcomingDays int
}

// Zone is TimeZone, or DefaultTimeZone for a Config not read by FromEnv.
func (c Config) Zone() *time.Location {
	if c.TimeZone != nil {
		return c.TimeZone
	}
	loc, err := time.LoadLocation(DefaultTimeZone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// UseDynamoDB reports whether records go to DynamoDB: always in Lambda, and locally when
// DYNAMODB_ENDPOINT points at DynamoDB Local; otherwise the in-memory store is used.
func (c Config) UseDynamoDB() bool { return c.InLambda || c.DynamoDBEndpoint != "" }

// FromEnv reads the configuration through getenv (os.Getenv in production). It reports every
// bad variable at once.
func FromEnv(getenv func(string) string) (Config, error) {
	p := parser{getenv: getenv}
	c := Config{
		LocalAddr:             p.str("LOCAL_ADDR", DefaultLocalAddr),
		Provider:              p.oneOf("KNOWLEDGE_PROVIDER", DefaultProvider, "demo", "ragcore"),
		KnowledgeDir:          p.str("KNOWLEDGE_DIR", ""),
		Tenant:                p.str("KNOWLEDGE_TENANT", DefaultTenant),
		Workspace:             p.str("KNOWLEDGE_WORKSPACE", DefaultWorkspace),
		Collection:            p.str("KNOWLEDGE_COLLECTION", DefaultCollection),
		RAGcoreBaseURL:        p.url("RAGCORE_BASE_URL"),
		RAGcoreToken:          getenv("RAGCORE_TOKEN"),
		RAGcoreTokenParameter: p.str("RAGCORE_TOKEN_PARAMETER", ""),
		RAGcoreSourcePrefix:   p.str("RAGCORE_SOURCE_PREFIX", DefaultRAGcoreSourcePrefix),
		RAGcoreTimeout:        p.millis("RAGCORE_TIMEOUT_MS", DefaultRAGcoreTimeout, 50, 30000),
		VerifyConcurrency:     p.integer("VERIFY_CONCURRENCY", DefaultVerifyConcurrency, 1, 64),
		GroundedCosine:        p.decimal("L1_GROUNDED_COSINE", DefaultGroundedCosine, 0, 1),
		SupportedCosine:       p.decimal("L1_SUPPORTED_COSINE", DefaultSupportedCosine, 0, 1),
		VerifyBudget:          p.millis("VERIFY_BUDGET_MS", DefaultVerifyBudget, 100, 60000),
		DynamoDBEndpoint:      p.url("DYNAMODB_ENDPOINT"),
		SidecarEnabled:        p.boolean("SIDECAR_ENABLED", DefaultSidecarEnabled),
		SidecarTimeout:        p.millis("SIDECAR_TIMEOUT_MS", DefaultSidecarTimeout, 50, 10000),
		BedrockKnowledgeBase:  p.str("BEDROCK_KNOWLEDGE_BASE_ID", ""),
		BedrockEndpoint:       p.url("BEDROCK_ENDPOINT"),
		AuthMode:              p.oneOf("AUTH_MODE", DefaultAuthMode, "jwt", "local-headers"),
		TraceRetention:        p.days("TRACE_RETENTION_DAYS", DefaultTraceRetention, 1, 3650),
		TableName:             p.str("TABLE_NAME", DefaultTableName),
		L1Enabled:             p.boolean("RETRIEVAL_L1_ENABLED", DefaultL1Enabled),
		LogLevel:              p.oneOf("LOG_LEVEL", DefaultLogLevel, "debug", "info", "warn", "error"),
		FunctionName:          p.str("AWS_LAMBDA_FUNCTION_NAME", DefaultFunctionName),
		InLambda:              getenv("AWS_LAMBDA_RUNTIME_API") != "",
		DynamoDBTimeout:       p.millis("DYNAMODB_TIMEOUT_MS", DefaultDynamoDBTimeout, 50, 30000),
		AWSRegion:             p.str("AWS_REGION", DefaultAWSRegion),
		XRayDaemonAddress:     p.str("AWS_XRAY_DAEMON_ADDRESS", ""),
		Tracing:               p.oneOf("TRACING", DefaultTracing, "xray", "otel", "off"),
	}
	if c.Tracing == "otel" {
		c.OTelTracesExporter = p.oneOf("OTEL_TRACES_EXPORTER", DefaultOTelTracesExporter, "otlp", "console", "none")
		// The OTLP exporter linked speaks HTTP with protobuf, which the collector layer receives
		// on localhost:4318; gRPC is not linked.
		for _, name := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
			if v := p.str(name, "http/protobuf"); v != "http/protobuf" {
				p.errs = append(p.errs, fmt.Errorf("%s=%q: only http/protobuf is supported", name, v))
			}
		}
	}
	if mb := p.integer("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", 0, 0, 1<<20); mb > 0 && getenv("GOMEMLIMIT") == "" {
		c.MemoryLimitBytes = int64(mb) << 20 * 9 / 10
	}
	c.RAGcoreBreakerFailures = p.integer("RAGCORE_BREAKER_FAILURES", DefaultBreakerFailures, 1, 1000)
	c.RAGcoreBreakerCooldown = p.millis("RAGCORE_BREAKER_COOLDOWN_MS", DefaultBreakerCooldown, 100, 600000)
	c.TraceWriteWait = p.millis("DYNAMODB_TRACE_WAIT_MS", DefaultTraceWriteWait, 10, 30000)
	c.DynamoDBBreakerFailures = p.integer("DYNAMODB_BREAKER_FAILURES", DefaultBreakerFailures, 1, 1000)
	c.DynamoDBBreakerCooldown = p.millis("DYNAMODB_BREAKER_COOLDOWN_MS", DefaultBreakerCooldown, 100, 600000)
	c.VerifyNegativeTTL = p.millis("VERIFY_NEGATIVE_TTL_MS", DefaultVerifyNegativeTTL, 0, 300000)
	c.TimeZone = p.zone("KNOWLEDGE_TIME_ZONE", DefaultTimeZone)
	c.UpcomingDays = p.integer("KNOWLEDGE_UPCOMING_DAYS", DefaultUpcomingDays, 0, 366)
	if c.InLambda && c.AuthMode == "local-headers" && getenv("AWS_SAM_LOCAL") != "true" {
		// Headers name the actor only on a developer's machine; deployed, that would let any
		// caller choose its identity and scopes.
		p.errs = append(p.errs, errors.New("AUTH_MODE=local-headers is refused in Lambda outside sam local; use jwt"))
	}
	if c.SupportedCosine > c.GroundedCosine {
		p.errs = append(p.errs, fmt.Errorf("L1_SUPPORTED_COSINE=%g: must not exceed L1_GROUNDED_COSINE=%g", c.SupportedCosine, c.GroundedCosine))
	}
	if c.Provider == "ragcore" {
		if c.RAGcoreBaseURL == "" && getenv("RAGCORE_BASE_URL") == "" {
			p.errs = append(p.errs, errors.New("RAGCORE_BASE_URL: required when KNOWLEDGE_PROVIDER=ragcore"))
		}
		if c.RAGcoreToken == "" && c.RAGcoreTokenParameter == "" {
			p.errs = append(p.errs, errors.New("RAGCORE_TOKEN or RAGCORE_TOKEN_PARAMETER: one is required when KNOWLEDGE_PROVIDER=ragcore"))
		}
	}
	if len(p.errs) > 0 {
		return Config{}, fmt.Errorf("configuration: %w", errors.Join(p.errs...))
	}
	return c, nil
}

type parser struct {
	getenv func(string) string
	errs   []error
}

func (p *parser) str(name, def string) string {
	if v := strings.TrimSpace(p.getenv(name)); v != "" {
		return v
	}
	return def
}

// zone reads an IANA time zone name ("Europe/Berlin"); "Local" is refused, as it would make
// the day depend on the machine.
func (p *parser) zone(name, def string) *time.Location {
	v := p.str(name, def)
	loc, err := time.LoadLocation(v)
	if err != nil || v == "Local" || v == "" {
		p.errs = append(p.errs, fmt.Errorf("%s=%q: must be an IANA time zone name such as Europe/Berlin", name, v))
		return time.UTC
	}
	return loc
}

func (p *parser) oneOf(name, def string, allowed ...string) string {
	v := p.str(name, def)
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	p.errs = append(p.errs, fmt.Errorf("%s=%q: must be one of %s", name, v, strings.Join(allowed, ", ")))
	return def
}

func (p *parser) integer(name string, def, lo, hi int) int {
	v := p.str(name, "")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		p.errs = append(p.errs, fmt.Errorf("%s=%q: must be an integer from %d to %d", name, v, lo, hi))
		return def
	}
	return n
}

// millis reads a duration in whole milliseconds from lo to hi.
func (p *parser) millis(name string, def time.Duration, lo, hi int) time.Duration {
	return time.Duration(p.integer(name, int(def/time.Millisecond), lo, hi)) * time.Millisecond
}

// days reads a duration in whole days from lo to hi.
func (p *parser) days(name string, def time.Duration, lo, hi int) time.Duration {
	const day = 24 * time.Hour
	return time.Duration(p.integer(name, int(def/day), lo, hi)) * day
}

func (p *parser) decimal(name string, def, lo, hi float64) float64 {
	v := p.str(name, "")
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < lo || f > hi {
		p.errs = append(p.errs, fmt.Errorf("%s=%q: must be a number from %g to %g", name, v, lo, hi))
		return def
	}
	return f
}

func (p *parser) boolean(name string, def bool) bool {
	v := p.str(name, "")
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("%s=%q: must be true or false", name, v))
		return def
	}
	return b
}

func (p *parser) url(name string) string {
	v := p.str(name, "")
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.errs = append(p.errs, fmt.Errorf("%s: must be an http or https URL", name))
		return ""
	}
	return strings.TrimRight(v, "/")
}
