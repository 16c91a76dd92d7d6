// Package tracing is the service's one seam to tracing: it instruments the AWS SDK clients
// (DynamoDB, SSM, Bedrock) and the HTTP client to RAGcore, opens one span per invocation
// (Tracer.Invocation) and lets the packages below mark their steps (Start) and the values an
// operator searches by (Annotate). Nothing else imports a tracing SDK.
//
// Two tracers stand behind the seam, chosen by TRACING: "xray", the X-Ray SDK for Go (end of
// support 2027-02-25; xray.go), and "otel", the OpenTelemetry SDK with the X-Ray ID generator and
// propagator, exporting OTLP to the ADOT collector layer (otel.go); "off" traces nothing.
// Start and Annotate follow the span the context carries, whichever tracer opened it: a step
// outside any invocation's span costs two context look-ups and records nothing.
package tracing

import (
	"context"
	"io"
	"log/slog"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/middleware"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// The tracers TRACING chooses from.
const (
	ModeXRay = "xray"
	ModeOTel = "otel"
	ModeOff  = "off"
)

// The exporters OTEL_TRACES_EXPORTER chooses from on the OpenTelemetry path.
const (
	ExporterOTLP    = "otlp"
	ExporterConsole = "console"
	ExporterNone    = "none"
)

// Options choose and configure the tracer.
type Options struct {
	// Mode is TRACING: ModeXRay, ModeOTel or ModeOff.
	Mode string
	// XRayDaemonAddress is AWS_XRAY_DAEMON_ADDRESS, which Lambda sets when active tracing is on:
	// the X-Ray path is active only with it.
	XRayDaemonAddress string
	// Exporter is OTEL_TRACES_EXPORTER on the OpenTelemetry path: ExporterOTLP (OTLP over HTTP,
	// to the collector layer; the SDK reads OTEL_EXPORTER_OTLP_* itself), ExporterConsole (one
	// JSON line per span on Out) or ExporterNone.
	Exporter string
	// ServiceName names the service in the spans' resource (OTEL_SERVICE_NAME overrides it).
	ServiceName string
	// InLambda marks the resource as a Lambda function's.
	InLambda bool
	// Out receives the console exporter's spans (stdout).
	Out io.Writer
	Log *slog.Logger
}

// Tracer opens invocations' spans and instruments clients; its zero value traces nothing.
type Tracer struct {
	mode string
	xray *xrayTracer
	otel *otelTracer
}

// New returns the tracer opts choose. Nothing is exported, connected or allocated beyond a few
// words here: the OpenTelemetry provider and its exporter are built at the first invocation, so
// that a cold start pays for neither.
func New(opts Options) *Tracer {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	switch opts.Mode {
	case ModeOTel:
		return &Tracer{mode: ModeOTel, otel: newOTel(opts, log)}
	case ModeXRay, "":
		if opts.XRayDaemonAddress == "" {
			return &Tracer{mode: ModeXRay}
		}
		return &Tracer{mode: ModeXRay, xray: newXRay(opts.XRayDaemonAddress, log)}
	}
	return &Tracer{mode: ModeOff}
}

// Active reports whether spans are recorded and clients instrumented.
func (t *Tracer) Active() bool { return t != nil && (t.xray != nil || t.otel != nil) }

// Mode is the tracer chosen (ModeXRay, ModeOTel or ModeOff), as the start-up log reports it.
func (t *Tracer) Mode() string {
	if t == nil || t.mode == "" {
		return ModeOff
	}
	return t.mode
}

// Invocation opens the span of one invocation, named name, continuing the caller's trace from
// header (an X-Amzn-Trace-Id value: the Lambda invocation's, or the local API's request header)
// when there is one. end closes the span and flushes every span of the invocation before it
// returns, since Lambda freezes the process once the response is out.
func (t *Tracer) Invocation(ctx context.Context, name, header string) (_ context.Context, end func()) {
	switch {
	case t == nil:
	case t.otel != nil:
		return t.otel.invocation(ctx, name, header)
	case t.xray != nil:
		return t.xray.invocation(ctx, name, header)
	}
	return ctx, nothing
}

// AWS instruments every client built from cfg: a call within an invocation is a span of its own
// under the invocation's; a call outside any (the token read at a cold start) is left alone.
func (t *Tracer) AWS(cfg *aws.Config) {
	if opts := t.APIOptions(); opts != nil {
		cfg.APIOptions = append(cfg.APIOptions, opts...)
	}
}

// APIOptions are the middleware that AWS adds, for clients built from options rather than a
// configuration; nil when tracing is off.
func (t *Tracer) APIOptions() []func(*middleware.Stack) error {
	switch {
	case t == nil:
	case t.otel != nil:
		return t.otel.apiOptions()
	case t.xray != nil:
		return t.xray.apiOptions()
	}
	return nil
}

// HTTP returns c wrapped so that every request made within an invocation's trace is a span of its
// own carrying the X-Amzn-Trace-Id header. Requests outside any trace go through untouched.
func (t *Tracer) HTTP(c *http.Client) *http.Client {
	var wrap func(http.RoundTripper) roundTripper
	switch {
	case t == nil:
		return c
	case t.otel != nil:
		wrap = otelTransport
	case t.xray != nil:
		wrap = xrayTransport
	default:
		return c
	}
	plain := c.Transport
	if plain == nil {
		plain = http.DefaultTransport
	}
	out := *c
	out.Transport = wrap(plain)
	return &out
}

// roundTripper sends a request through traced when inTrace says its context is within a trace,
// through plain otherwise.
type roundTripper struct {
	plain, traced http.RoundTripper
	inTrace       func(context.Context) bool
}

func (rt roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	if rt.inTrace(r.Context()) {
		return rt.traced.RoundTrip(r)
	}
	return rt.plain.RoundTrip(r)
}

// Start opens a span named name under the span ctx carries (an invocation's, or a step's within
// it); end closes it. Without one, it records nothing and costs next to nothing.
func Start(ctx context.Context, name string) (_ context.Context, end func()) {
	if span := trace.SpanFromContext(ctx); span.SpanContext().IsValid() {
		ctx, child := span.TracerProvider().Tracer(scopeName).Start(ctx, name)
		return ctx, func() { child.End() }
	}
	if ctx, end, ok := startXRay(ctx, name); ok {
		return ctx, end
	}
	return ctx, nothing
}

func nothing() {}

// Annotations are the values an operator searches traces by, made X-Ray annotations (indexed)
// on both paths. They are the only annotations the service records: a question's text has no
// field here, and never reaches a span.
type Annotations struct {
	Provider      string
	EvidenceState string
	Language      string
	Layer         string
	InvocationID  string
}

// The annotations' keys, as X-Ray indexes them (letters, digits and underscores).
const (
	KeyProvider      = "provider"
	KeyEvidenceState = "evidence_state"
	KeyLanguage      = "language"
	KeyLayer         = "layer"
	KeyInvocationID  = "invocation_id"
)

// xrayAnnotationsKey is the attribute that lists, on an OpenTelemetry span, the attributes the
// collector's X-Ray exporter turns into annotations.
const xrayAnnotationsKey = "aws.xray.annotations"

// pairs are a's set values under their keys.
func (a Annotations) pairs() []attribute.KeyValue {
	all := [...]attribute.KeyValue{
		attribute.String(KeyProvider, a.Provider), attribute.String(KeyEvidenceState, a.EvidenceState),
		attribute.String(KeyLanguage, a.Language), attribute.String(KeyLayer, a.Layer),
		attribute.String(KeyInvocationID, a.InvocationID),
	}
	out := make([]attribute.KeyValue, 0, len(all))
	for _, kv := range all {
		if kv.Value.AsString() != "" {
			out = append(out, kv)
		}
	}
	return out
}

// Annotate records a's set values on the span ctx carries, as annotations; without a span it
// does nothing.
func Annotate(ctx context.Context, a Annotations) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		kvs := a.pairs()
		keys := make([]string, len(kvs))
		for i, kv := range kvs {
			keys[i] = string(kv.Key)
		}
		span.SetAttributes(kvs...)
		span.SetAttributes(attribute.StringSlice(xrayAnnotationsKey, keys))
		return
	}
	annotateXRay(ctx, a)
}

// scopeName names the service's own spans' instrumentation scope.
const scopeName = "github.com/northstar-mobility/mobilityops-knowledge"
