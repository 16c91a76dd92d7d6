//lint:file-ignore SA1019 otelaws, which the design names for the AWS SDK clients, is marked unsupported upstream but works with this SDK; its successor is the SDK's own tracing (aws.Config.TracerProvider through smithy-go's OpenTelemetry adapter), to take up when that adapter is a dependency this module can pin.

package tracing

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/aws/smithy-go/middleware"
	"go.opentelemetry.io/contrib/instrumentation/github.com/aws/aws-sdk-go-v2/otelaws"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/contrib/propagators/aws/xray"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/span"
)

// otelTracer is the OpenTelemetry path (TRACING=otel): the official SDK with X-Ray trace and span
// ids (so that X-Ray accepts them) and the X-Ray propagator (the X-Amzn-Trace-Id header, in and
// out), a batch span processor flushed at the end of every invocation. The standard OTEL_*
// variables the SDK reads itself apply (OTEL_EXPORTER_OTLP_*, OTEL_TRACES_SAMPLER, OTEL_BSP_*,
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES).
type otelTracer struct {
	provider func() *sdktrace.TracerProvider
	log      *slog.Logger
}

// flushTimeout bounds the flush at the end of an invocation: the collector layer listens on
// localhost, and a flush that cannot finish must not hold the response for long.
const flushTimeout = 2 * time.Second

func newOTel(opts Options, log *slog.Logger) *otelTracer {
	return &otelTracer{log: log, provider: sync.OnceValue(func() *sdktrace.TracerProvider { return buildProvider(opts, log) })}
}

// buildProvider builds the provider and its exporter, at the first invocation.
func buildProvider(opts Options, log *slog.Logger) *sdktrace.TracerProvider {
	attrs := []attribute.KeyValue{attribute.String("service.name", opts.ServiceName)}
	if opts.InLambda {
		attrs = append(attrs, attribute.String("cloud.provider", "aws"), attribute.String("cloud.platform", "aws_lambda"),
			attribute.String("faas.name", opts.ServiceName))
	}
	// Detected after the service's own attributes, OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// override them.
	res, err := resource.New(context.Background(), resource.WithAttributes(attrs...), resource.WithFromEnv(),
		resource.WithTelemetrySDK())
	if err != nil {
		log.Warn("opentelemetry resource", "error", err.Error())
	}
	tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithIDGenerator(xray.NewIDGenerator()), sdktrace.WithResource(res)}
	var exp sdktrace.SpanExporter
	switch opts.Exporter {
	case ExporterConsole:
		out := opts.Out
		if out == nil {
			out = os.Stdout
		}
		exp, err = stdouttrace.New(stdouttrace.WithWriter(out))
	case ExporterNone:
	default: // ExporterOTLP, the SDK's default
		exp, err = otlptracehttp.New(context.Background())
	}
	if err != nil {
		log.Error("opentelemetry exporter could not be built; spans are not exported", "exporter", opts.Exporter,
			"error", err.Error())
	} else if exp != nil {
		tpOpts = append(tpOpts, sdktrace.WithBatcher(exp))
	}
	return sdktrace.NewTracerProvider(tpOpts...)
}

func (o *otelTracer) invocation(ctx context.Context, name, header string) (context.Context, func()) {
	tp := o.provider()
	if header != "" {
		ctx = xray.Propagator{}.Extract(ctx, propagation.MapCarrier{xrayHeader: header})
	}
	ctx, root := tp.Tracer(scopeName).Start(span.With(ctx, otelSteps{}), name, trace.WithSpanKind(trace.SpanKindServer))
	return ctx, func() {
		root.End()
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
		defer cancel()
		if err := tp.ForceFlush(fctx); err != nil {
			o.log.WarnContext(ctx, "opentelemetry flush failed; this invocation's spans may be lost", "error", err.Error())
		}
	}
}

// otelSteps records the steps of an invocation as OpenTelemetry spans, through the provider of
// the span the context carries.
type otelSteps struct{}

func (otelSteps) Start(ctx context.Context, name string) (context.Context, func()) {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() {
		return ctx, nothing
	}
	ctx, child := parent.TracerProvider().Tracer(scopeName).Start(ctx, name)
	return ctx, func() { child.End() }
}

// Annotate sets a's values as attributes and lists their keys in aws.xray.annotations: one call
// per span, since a second would list only its own keys.
func (otelSteps) Annotate(ctx context.Context, a span.Annotations) {
	s := trace.SpanFromContext(ctx)
	if !s.IsRecording() {
		return
	}
	pairs := a.Pairs()
	attrs := make([]attribute.KeyValue, 0, len(pairs)+1)
	keys := make([]string, 0, len(pairs))
	for _, kv := range pairs {
		attrs = append(attrs, attribute.String(kv[0], kv[1]))
		keys = append(keys, kv[0])
	}
	s.SetAttributes(append(attrs, attribute.StringSlice(xrayAnnotationsKey, keys))...)
}

// xrayHeader is the header the X-Ray propagator reads and writes.
const xrayHeader = "X-Amzn-Trace-Id"

func (o *otelTracer) apiOptions() []func(*middleware.Stack) error {
	var opts []func(*middleware.Stack) error
	otelaws.AppendMiddlewares(&opts, otelaws.WithTracerProvider(underContext{}), otelaws.WithTextMapPropagator(xray.Propagator{}))
	return opts
}

// transport traces a request whose context carries a span, through otelhttp with the X-Ray
// propagator; the span's own provider records it.
func (o *otelTracer) transport(plain http.RoundTripper) http.RoundTripper {
	traced := otelhttp.NewTransport(plain, otelhttp.WithPropagators(xray.Propagator{}),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + r.URL.Path }))
	return roundTripper{plain: plain, traced: traced,
		inTrace: func(ctx context.Context) bool { return trace.SpanContextFromContext(ctx).IsValid() }}
}

// underContext is a TracerProvider whose tracers open spans under the span a context carries,
// through that span's provider, and open none without one: an SDK call outside an invocation
// (the token read at a cold start) neither builds the provider nor starts a trace of its own.
type underContext struct{ embedded.TracerProvider }

func (underContext) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return contextTracer{name: name, opts: opts}
}

type contextTracer struct {
	embedded.Tracer
	name string
	opts []trace.TracerOption
}

func (t contextTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	span := trace.SpanFromContext(ctx)
	if !span.SpanContext().IsValid() {
		return ctx, span // the no-op span
	}
	return span.TracerProvider().Tracer(t.name, t.opts...).Start(ctx, name, opts...)
}
