package tracing

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
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
	buf := make([]byte, 64<<10)
	_ = daemon.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, _, err := daemon.ReadFrom(buf)
	if err != nil {
		t.Fatalf("no segment reached the daemon: %v", err)
	}
	doc := string(buf[:n])
	if !strings.Contains(doc, `"name":"knowledge-test"`) || !strings.Contains(doc, `"subsegments"`) || !strings.Contains(doc, "/v1/health") {
		t.Errorf("segment document %s", doc)
	}

	// An invocation continuing a caller's trace: its steps are subsegments of the caller's
	// trace, with the annotations, sent to the daemon as each closes.
	ctx, end := tr.Invocation(context.Background(), "handler", testHeader)
	_, send := span.Start(ctx, "l0")
	send()
	span.Annotate(ctx, span.Annotations{Provider: "demo", EvidenceState: "grounded", Language: "en", Layer: "both", InvocationID: "INV1"})
	end()
	_ = daemon.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, _, err = daemon.ReadFrom(buf); err != nil {
		t.Fatalf("the invocation's subsegments did not reach the daemon: %v", err)
	}
	all := string(buf[:n])
	for _, want := range []string{`"trace_id":"1-67891233-abcdef012345678912345678"`, `"parent_id":"53995c3f42cd8ad8"`,
		`"name":"handler"`, `"name":"l0"`, `"provider":"demo"`, `"evidence_state":"grounded"`, `"language":"en"`,
		`"layer":"both"`, `"invocation_id":"INV1"`} {
		if !strings.Contains(all, want) {
			t.Errorf("no %s in %s", want, all)
		}
	}
}

// testHeader is a caller's X-Ray trace header, sampled.
const testHeader = "Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1"
