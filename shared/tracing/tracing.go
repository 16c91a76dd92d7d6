// Package tracing is the service's one seam to tracing: it instruments the AWS SDK clients
// (DynamoDB, SSM, Bedrock) and the HTTP client to RAGcore, opens one span per invocation
// (Tracer.Invocation), carrying in its context the Steps through which the services mark their
// steps and annotations (shared/span). Nothing else imports a tracing SDK.
//
// Two tracers stand behind the seam, chosen by TRACING: "xray", the X-Ray SDK for Go (end of
// support 2027-02-25; xray.go), and "otel", the OpenTelemetry SDK with the X-Ray ID generator and
// propagator, exporting OTLP to the ADOT collector layer (otel.go); "off" traces nothing.
package tracing

import (
	"context"
	"io"
	"log/slog"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/middleware"
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
	b    backend // nil: nothing is traced
}

// backend is one tracer behind the seam (xray.go, otel.go).
type backend interface {
	// invocation opens the span of one invocation, with the tracer's span.Steps in its context.
	invocation(ctx context.Context, name, header string) (context.Context, func())
	// apiOptions are the AWS SDK middleware that trace a call within an invocation.
	apiOptions() []func(*middleware.Stack) error
	// transport traces a request within an invocation and sends any other through plain.
	transport(plain http.RoundTripper) http.RoundTripper
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
		return &Tracer{mode: ModeOTel, b: newOTel(opts, log)}
	case ModeXRay, "":
		if opts.XRayDaemonAddress == "" {
			return &Tracer{mode: ModeXRay}
		}
		return &Tracer{mode: ModeXRay, b: newXRay(opts.XRayDaemonAddress, log)}
	}
	return &Tracer{mode: ModeOff}
}

// Active reports whether spans are recorded and clients instrumented.
func (t *Tracer) Active() bool { return t != nil && t.b != nil }

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
	if !t.Active() {
		return ctx, nothing
	}
	return t.b.invocation(ctx, name, header)
}

// AWS instruments every client built from cfg: a call within an invocation is a span of its own
// under the invocation's; a call outside any (the token read at a cold start) is left alone.
func (t *Tracer) AWS(cfg *aws.Config) {
	cfg.APIOptions = append(cfg.APIOptions, t.APIOptions()...)
}

// APIOptions are the middleware that AWS adds, for clients built from options rather than a
// configuration; nil when tracing is off.
func (t *Tracer) APIOptions() []func(*middleware.Stack) error {
	if !t.Active() {
		return nil
	}
	return t.b.apiOptions()
}

// HTTP returns c wrapped so that every request made within an invocation's trace is a span of its
// own carrying the X-Amzn-Trace-Id header. Requests outside any trace go through untouched.
func (t *Tracer) HTTP(c *http.Client) *http.Client {
	if !t.Active() {
		return c
	}
	plain := c.Transport
	if plain == nil {
		plain = http.DefaultTransport
	}
	out := *c
	out.Transport = t.b.transport(plain)
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

func nothing() {}

// xrayAnnotationsKey is the attribute that lists, on an OpenTelemetry span, the attributes the
// collector's X-Ray exporter turns into annotations.
const xrayAnnotationsKey = "aws.xray.annotations"

// scopeName names the service's own spans' instrumentation scope.
const scopeName = "github.com/northstar-mobility/mobilityops-knowledge"
