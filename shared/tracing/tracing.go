// Package tracing is the service's one seam to AWS X-Ray: it instruments the AWS SDK clients
// (DynamoDB, SSM) and the HTTP client to RAGcore. Nothing else imports the X-Ray SDK.
//
// The X-Ray SDK for Go reaches end of support on 2027-02-25. The replacement is OpenTelemetry
// (the otelaws middleware for SDK v2 clients, otelhttp for the HTTP client, the ADOT collector
// Lambda layer exporting to X-Ray); swapping it means changing this file alone.
package tracing

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-xray-sdk-go/instrumentation/awsv2"
	"github.com/aws/aws-xray-sdk-go/strategy/ctxmissing"
	"github.com/aws/aws-xray-sdk-go/xray"
	"github.com/aws/aws-xray-sdk-go/xraylog"
	"github.com/aws/smithy-go/middleware"
)

// Tracer instruments clients when tracing is active and leaves them untouched otherwise.
type Tracer struct {
	active bool
}

var configure sync.Once

// New returns the tracer. Active only where an X-Ray daemon listens (in Lambda with tracing on,
// AWS_XRAY_DAEMON_ADDRESS is set): elsewhere (the local API, the emulator, tests) clients are
// not wrapped at all. Where it is active but a call has no segment (work outside an
// invocation), the SDK stays quiet instead of logging an error per call; its own warnings and
// errors go to log.
func New(daemonAddress string, log *slog.Logger) *Tracer {
	if daemonAddress == "" {
		return &Tracer{}
	}
	configure.Do(func() {
		xray.SetLogger(logger{log})
		_ = xray.Configure(xray.Config{DaemonAddr: daemonAddress,
			ContextMissingStrategy: ctxmissing.NewDefaultIgnoreErrorStrategy()})
	})
	return &Tracer{active: true}
}

// Active reports whether clients are instrumented.
func (t *Tracer) Active() bool { return t.active }

// AWS adds X-Ray subsegments to every call of clients built from cfg.
func (t *Tracer) AWS(cfg *aws.Config) {
	if t.active {
		awsv2.AWSV2Instrumentor(&cfg.APIOptions)
	}
}

// APIOptions are the middleware that AWS adds, for clients built from options rather than a
// configuration; nil when tracing is off.
func (t *Tracer) APIOptions() []func(*middleware.Stack) error {
	if !t.active {
		return nil
	}
	var opts []func(*middleware.Stack) error
	awsv2.AWSV2Instrumentor(&opts)
	return opts
}

// HTTP returns c wrapped so that every request made within a trace (an invocation's, or a
// segment in the context) is a subsegment carrying the trace header. Requests outside any trace
// go through untouched, without the SDK's "segment cannot be found" warning.
func (t *Tracer) HTTP(c *http.Client) *http.Client {
	if !t.active {
		return c
	}
	plain := c.Transport
	if plain == nil {
		plain = http.DefaultTransport
	}
	traced := xray.Client(&http.Client{Transport: plain}).Transport
	out := *c
	out.Transport = roundTripper{plain: plain, traced: traced}
	return &out
}

type roundTripper struct{ plain, traced http.RoundTripper }

func (rt roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	// In Lambda the X-Ray SDK builds the segment from the invocation's trace header, which
	// aws-lambda-go puts in the context under this key.
	if xray.GetSegment(ctx) != nil || ctx.Value(xray.LambdaTraceHeaderKey) != nil {
		return rt.traced.RoundTrip(r)
	}
	return rt.plain.RoundTrip(r)
}

// logger passes the X-Ray SDK's warnings and errors to slog.
type logger struct{ log *slog.Logger }

func (l logger) Log(level xraylog.LogLevel, msg fmt.Stringer) {
	if level < xraylog.LogLevelWarn {
		return
	}
	l.log.Warn("x-ray", "level", level.String(), "message", msg.String())
}
