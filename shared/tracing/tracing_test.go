package tracing

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-xray-sdk-go/header"
	"github.com/aws/aws-xray-sdk-go/xray"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/span"
)

func TestInactiveTracerChangesNothing(t *testing.T) {
	for _, opts := range []Options{{Mode: ModeXRay}, {Mode: ModeOff, XRayDaemonAddress: "127.0.0.1:2000"}, {}} {
		tr := New(opts)
		c := &http.Client{}
		var cfg aws.Config
		tr.AWS(&cfg)
		if tr.Active() || tr.HTTP(c) != c || len(cfg.APIOptions) != 0 {
			t.Fatalf("%+v: an inactive tracer instrumented a client", opts)
		}
		ctx, end := tr.Invocation(context.Background(), "handler", testHeader)
		sctx, send := span.Start(ctx, "l0")
		span.Annotate(sctx, span.Annotations{Provider: "demo"})
		send()
		end()
		if sctx != context.Background() {
			t.Errorf("%+v: an inactive tracer put a span in the context", opts)
		}
	}
}

// TestActiveTracer runs the real X-Ray SDK against a UDP listener standing in for the daemon.
// The X-Ray SDK is configured once per process (New), as in a Lambda process: every run of the
// test (go test -count=N) shares one stand-in daemon and one log.
var (
	daemonOnce = sync.OnceValues(func() (net.PacketConn, error) { return net.ListenPacket("udp", "127.0.0.1:0") })
	tracerLogs testutil.SyncBuffer
)

func TestActiveTracer(t *testing.T) {
	daemon, err := daemonOnce()
	if err != nil {
		t.Fatal(err)
	}
	// Drop what an earlier run left unread.
	drain := make([]byte, 64<<10)
	for {
		_ = daemon.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		if _, _, err := daemon.ReadFrom(drain); err != nil {
			break
		}
	}
	logs := &tracerLogs
	logs.Reset()
	tr := New(Options{Mode: ModeXRay, XRayDaemonAddress: daemon.LocalAddr().String(), Log: slog.New(slog.NewTextHandler(logs, nil))})
	var cfg aws.Config
	tr.AWS(&cfg)
	if !tr.Active() || len(cfg.APIOptions) == 0 {
		t.Fatal("the AWS configuration was not instrumented")
	}

	headers := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers <- r.Header.Get("X-Amzn-Trace-Id")
	}))
	defer srv.Close()
	client := tr.HTTP(&http.Client{Timeout: time.Second})

	// Outside any segment (work before or after an invocation): the call works, nothing is logged.
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	<-headers
	if logs.Len() != 0 {
		t.Errorf("the tracer logged without a segment: %s", logs.String())
	}

	// An AWS SDK call outside a segment (the token read at a cold start) is quiet too.
	ssmSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.Write([]byte(`{"Parameter":{"Name":"/t","Value":"v"}}`))
	}))
	defer ssmSrv.Close()
	cfg.Region, cfg.Credentials = "eu-central-1", credentials.NewStaticCredentialsProvider("k", "s", "")
	out, err := ssm.NewFromConfig(cfg, func(o *ssm.Options) { o.BaseEndpoint = aws.String(ssmSrv.URL) }).
		GetParameter(context.Background(), &ssm.GetParameterInput{Name: aws.String("/t")})
	if err != nil || aws.ToString(out.Parameter.Value) != "v" {
		t.Fatalf("instrumented SDK call: %v", err)
	}
	if logs.Len() != 0 {
		t.Errorf("the tracer logged for an SDK call without a segment: %s", logs.String())
	}

	// Inside a segment: the request carries the trace header and a subsegment reaches the daemon.
	// Sampled by its header: the default sampling keeps one trace a second, so a second run
	// within the same second (-count=N) would send nothing.
	ctx, seg := xray.BeginSegmentWithSampling(context.Background(), "knowledge-test",
		httptest.NewRequest(http.MethodGet, "/lookup", nil), &header.Header{SamplingDecision: header.Sampled})
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v1/health", nil)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	seg.Close(nil)
	if h := <-headers; !strings.Contains(h, "Root="+seg.TraceID) {
		t.Errorf("trace header %q does not name the segment's trace %s", h, seg.TraceID)
	}
	if doc := readSegments(daemon, seg.TraceID, `"name":"knowledge-test"`, `"subsegments"`, "/v1/health"); !strings.Contains(doc, "/v1/health") {
		t.Errorf("no segment of trace %s with its HTTP subsegment reached the daemon: %s", seg.TraceID, doc)
	}

	// An invocation continuing a caller's trace: its steps are subsegments of the caller's
	// trace, with the annotations, sent to the daemon as each closes.
	ctx, end := tr.Invocation(context.Background(), "handler", testHeader)
	_, send := span.Start(ctx, "l0")
	send()
	span.Annotate(ctx, span.Annotations{Provider: "demo", EvidenceState: "grounded", Language: "en", Layer: "both", InvocationID: "INV1"})
	end()
	wants := []string{`"trace_id":"1-67891233-abcdef012345678912345678"`, `"parent_id":"53995c3f42cd8ad8"`,
		`"name":"handler"`, `"name":"l0"`, `"provider":"demo"`, `"evidence_state":"grounded"`, `"language":"en"`,
		`"layer":"both"`, `"invocation_id":"INV1"`}
	all := readSegments(daemon, "1-67891233-abcdef012345678912345678", wants...)
	for _, want := range wants {
		if !strings.Contains(all, want) {
			t.Errorf("no %s in %s", want, all)
		}
	}
}

// testHeader is a caller's X-Ray trace header, sampled.
const testHeader = "Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1"

// readSegments reads the documents the daemon receives for up to 5 s and returns those of trace
// traceID, joined, as soon as they hold every one of wants. The SDK sends a segment's documents
// as its parts close and may send one again (streaming), so the next datagram is not
// necessarily the one a step expects.
func readSegments(daemon net.PacketConn, traceID string, wants ...string) string {
	buf := make([]byte, 64<<10)
	deadline := time.Now().Add(5 * time.Second)
	var docs strings.Builder
	for {
		_ = daemon.SetReadDeadline(deadline)
		n, _, err := daemon.ReadFrom(buf)
		if err != nil {
			return docs.String()
		}
		if doc := string(buf[:n]); strings.Contains(doc, traceID) {
			docs.WriteString(doc)
			docs.WriteByte('\n')
		}
		all := docs.String()
		if !slices.ContainsFunc(wants, func(w string) bool { return !strings.Contains(all, w) }) {
			return all
		}
	}
}
