package tracing

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/otlptest"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/span"
)

// TestOTelExportsOverOTLP runs the OpenTelemetry path against an in-process OTLP receiver: the
// invocation continues the caller's X-Ray trace, steps nest under it, the annotations are listed
// for X-Ray, outbound calls within the invocation are spans carrying the trace header, calls
// outside it are not traced, and every span is exported when the invocation ends.
func TestOTelExportsOverOTLP(t *testing.T) {
	rcv := otlptest.New(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.Endpoint)
	tr := New(Options{Mode: ModeOTel, Exporter: ExporterOTLP, ServiceName: "knowledge-test"})
	if !tr.Active() || tr.Mode() != ModeOTel {
		t.Fatal("the otel tracer is not active")
	}
	headers := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers <- r.Header.Get("X-Amzn-Trace-Id")
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.Write([]byte(`{"Parameter":{"Name":"/t","Value":"v"}}`))
	}))
	defer srv.Close()
	client := tr.HTTP(&http.Client{Timeout: time.Second})
	cfg := aws.Config{Region: "eu-central-1", Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")}
	tr.AWS(&cfg)
	params := ssm.NewFromConfig(cfg, func(o *ssm.Options) { o.BaseEndpoint = aws.String(srv.URL) })

	// Outside an invocation (a cold start's token read): no span, no trace header.
	if _, err := params.GetParameter(context.Background(), &ssm.GetParameterInput{Name: aws.String("/t")}); err != nil {
		t.Fatal(err)
	}
	if h := <-headers; h != "" {
		t.Errorf("a call outside any invocation carried a trace header %q", h)
	}

	ctx, end := tr.Invocation(context.Background(), "handler", testHeader)
	lctx, lend := span.Start(ctx, "l1")
	req, _ := http.NewRequestWithContext(lctx, http.MethodPost, srv.URL+"/v1/retrieve", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	lend()
	wctx, wend := span.Start(ctx, "trace_write")
	if _, err := params.GetParameter(wctx, &ssm.GetParameterInput{Name: aws.String("/t")}); err != nil {
		t.Fatal(err)
	}
	wend()
	span.Annotate(ctx, span.Annotations{Provider: "demo", EvidenceState: "grounded", Language: "en", Layer: "both", InvocationID: "INV1"})
	end()
	for range 2 {
		if h := <-headers; !strings.Contains(h, "Root=1-67891233-abcdef012345678912345678") {
			t.Errorf("an outbound call within the invocation carried %q, not the caller's trace", h)
		}
	}

	spans := rcv.Spans() // end flushed: everything is there
	byName := map[string]otlptest.Span{}
	for _, s := range spans {
		if s.TraceID != "67891233abcdef012345678912345678" {
			t.Errorf("span %s in trace %s, not the caller's", s.Name, s.TraceID)
		}
		byName[s.Name] = s
	}
	handler, ok := byName["handler"]
	if !ok || handler.ParentSpanID != "53995c3f42cd8ad8" {
		t.Fatalf("handler span %+v; spans %v", handler, names(spans))
	}
	if byName["l1"].ParentSpanID != handler.SpanID || byName["trace_write"].ParentSpanID != handler.SpanID {
		t.Errorf("steps not under the handler: %v", spans)
	}
	if byName["POST /v1/retrieve"].ParentSpanID != byName["l1"].SpanID {
		t.Errorf("the HTTP call is not under l1: %v", names(spans))
	}
	if byName["SSM.GetParameter"].ParentSpanID != byName["trace_write"].SpanID {
		t.Errorf("the SDK call is not under trace_write: %v", names(spans))
	}
	want := []string{"evidence_state", "invocation_id", "language", "layer", "provider"}
	got := slices.Sorted(slices.Values(handler.Lists["aws.xray.annotations"]))
	if !slices.Equal(got, want) || handler.Attributes["provider"] != "demo" || handler.Attributes["invocation_id"] != "INV1" {
		t.Errorf("annotations %v, attributes %v", got, handler.Attributes)
	}
	if len(spans) != 5 {
		t.Errorf("spans %v, want handler, l1, its HTTP call, trace_write and its SDK call", names(spans))
	}
}

func names(spans []otlptest.Span) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name
	}
	return out
}

// TestOTelConsole: with the console exporter, each span is a JSON line on Out by the time the
// invocation ends; without a caller's header the invocation starts a trace of its own, with an
// X-Ray trace id (its first 8 hex digits the start time in seconds).
func TestOTelConsole(t *testing.T) {
	var out bytes.Buffer
	tr := New(Options{Mode: ModeOTel, Exporter: ExporterConsole, Out: &out})
	before := time.Now().Unix()
	ctx, end := tr.Invocation(context.Background(), "handler", "")
	_, send := span.Start(ctx, "verdict")
	send()
	end()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("console output %q", out.String())
	}
	var span struct {
		Name        string
		SpanContext struct{ TraceID string }
	}
	if err := json.Unmarshal([]byte(lines[1]), &span); err != nil || span.Name != "handler" {
		t.Fatalf("%v: %s", err, lines[1])
	}
	epoch, err := strconv.ParseInt(span.SpanContext.TraceID[:8], 16, 64)
	if err != nil || epoch < before || epoch > time.Now().Unix() {
		t.Errorf("trace id %s does not start with the time (X-Ray ids)", span.SpanContext.TraceID)
	}
}
