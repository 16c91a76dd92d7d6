package tracing

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/aws/aws-xray-sdk-go/instrumentation/awsv2"
	"github.com/aws/aws-xray-sdk-go/strategy/ctxmissing"
	"github.com/aws/aws-xray-sdk-go/xray"
	"github.com/aws/aws-xray-sdk-go/xraylog"
	"github.com/aws/smithy-go/middleware"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/span"
)

// xrayTracer is the X-Ray SDK path (TRACING=xray): segments go to the daemon over UDP as each
// subsegment closes, so there is nothing left to flush when an invocation ends.
type xrayTracer struct{}

var configureXRay sync.Once

// newXRay configures the X-Ray SDK once per process. Where a call has no segment (work outside
// an invocation), the SDK stays quiet instead of logging an error per call; its own warnings and
// errors go to log.
func newXRay(daemonAddress string, log *slog.Logger) *xrayTracer {
	configureXRay.Do(func() {
		xray.SetLogger(xrayLogger{log})
		_ = xray.Configure(xray.Config{DaemonAddr: daemonAddress,
			ContextMissingStrategy: ctxmissing.NewDefaultIgnoreErrorStrategy()})
	})
	return &xrayTracer{}
}

// invocation opens a subsegment named name. In Lambda the SDK builds the function's (facade)
// segment from the invocation's trace header, which aws-lambda-go puts in the context; elsewhere
// a header given continues that trace the same way, and without one the span is a segment of
// its own.
func (x *xrayTracer) invocation(ctx context.Context, name, header string) (context.Context, func()) {
	var seg *xray.Segment
	ctx = span.With(ctx, xraySteps{})
	switch lambdaHeader, _ := ctx.Value(xray.LambdaTraceHeaderKey).(string); {
	case lambdaHeader != "":
		ctx, seg = xray.BeginSubsegment(ctx, name)
	case header != "":
		//lint:ignore SA1029 the X-Ray SDK reads the header under its own plain string key
		ctx, seg = xray.BeginSubsegment(context.WithValue(ctx, xray.LambdaTraceHeaderKey, header), name)
	default:
		ctx, seg = xray.BeginSegment(ctx, name)
	}
	if seg == nil {
		return ctx, nothing
	}
	return ctx, func() { seg.Close(nil) }
}

func (x *xrayTracer) apiOptions() []func(*middleware.Stack) error {
	var opts []func(*middleware.Stack) error
	awsv2.AWSV2Instrumentor(&opts)
	return opts
}

// transport sends a request within a trace (a segment in the context, or an invocation's
// trace header) through the X-Ray SDK's client, and any other untouched, without the SDK's
// "segment cannot be found" warning.
func (x *xrayTracer) transport(plain http.RoundTripper) http.RoundTripper {
	return roundTripper{plain: plain, traced: xray.Client(&http.Client{Transport: plain}).Transport,
		inTrace: func(ctx context.Context) bool {
			return xray.GetSegment(ctx) != nil || ctx.Value(xray.LambdaTraceHeaderKey) != nil
		}}
}

// xraySteps records the steps of an invocation as subsegments of the segment the context carries.
type xraySteps struct{}

func (xraySteps) Start(ctx context.Context, name string) (context.Context, func()) {
	if xray.GetSegment(ctx) == nil {
		return ctx, nothing
	}
	ctx, seg := xray.BeginSubsegment(ctx, name)
	if seg == nil {
		return ctx, nothing
	}
	return ctx, func() { seg.Close(nil) }
}

func (xraySteps) Annotate(ctx context.Context, a span.Annotations) {
	seg := xray.GetSegment(ctx)
	if seg == nil {
		return
	}
	for _, kv := range a.Pairs() {
		_ = seg.AddAnnotation(kv[0], kv[1])
	}
}

// xrayLogger passes the X-Ray SDK's warnings and errors to slog.
type xrayLogger struct{ log *slog.Logger }

func (l xrayLogger) Log(level xraylog.LogLevel, msg fmt.Stringer) {
	if level < xraylog.LogLevelWarn {
		return
	}
	l.log.Warn("x-ray", "level", level.String(), "message", msg.String())
}
