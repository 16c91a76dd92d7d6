package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
)

// tracer records the invocations the handler opens and whether each was ended before the
// handler returned.
type tracer struct{ opened, ended []string }

func (tr *tracer) Invocation(ctx context.Context, name, header string) (context.Context, func()) {
	tr.opened = append(tr.opened, name+" "+header)
	return ctx, func() { tr.ended = append(tr.ended, name) }
}

// TestEveryInvocationIsASpan: a request through either adapter and a scheduled event each open
// one span, continuing the trace header there is (Lambda's before the request's own), and end it
// before the handler returns.
func TestEveryInvocationIsASpan(t *testing.T) {
	h, _ := newHandler(t, api.AuthLocalHeaders)
	tr := &tracer{}
	h.WithTracer(tr)

	const lambdaHeader, gatewayHeader = "Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1",
		"Root=1-67891233-abcdef012345678912345678;Parent=1111111111111111;Sampled=1"
	//lint:ignore SA1029 aws-lambda-go puts the invocation's header under this plain string key
	ctx := context.WithValue(context.Background(), "x-amzn-trace-id", lambdaHeader)
	ev := events.APIGatewayV2HTTPRequest{RawPath: api.BasePath + "/health", Headers: map[string]string{"X-Amzn-Trace-Id": gatewayHeader}}
	ev.RequestContext.HTTP.Method = http.MethodGet
	if _, err := h.Lambda(ctx, ev); err != nil {
		t.Fatal(err)
	}

	srv := httptest.NewServer(h.HTTP(api.MaxBody))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+api.BasePath+"/health", nil)
	req.Header.Set("X-Amzn-Trace-Id", gatewayHeader)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	schedule := h.LambdaWithSchedule(func(context.Context, string) (any, error) { return "ok", nil })
	raw, _ := json.Marshal(map[string]string{"source": "aws.events", "detail-type": "Scheduled Event", "id": "e1"})
	if _, err := schedule(ctx, raw); err != nil {
		t.Fatal(err)
	}
	want := []string{"handler " + lambdaHeader, "handler " + gatewayHeader, "schedule " + lambdaHeader}
	if !slices.Equal(tr.opened, want) || strings.Join(tr.ended, ",") != "handler,handler,schedule" {
		t.Errorf("opened %q, ended %q", tr.opened, tr.ended)
	}
}

// The Lambda adapter reads what the runtime tells of the invocation once, at the edge: the
// request's log line names its request id and X-Ray trace header; a request the local server
// received names neither.
func TestRequestLogNamesTheInvocation(t *testing.T) {
	h, logs := newHandler(t, api.AuthLocalHeaders)
	const trace = "Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1"
	//lint:ignore SA1029 aws-lambda-go puts the invocation's header under this plain string key
	ctx := context.WithValue(context.Background(), "x-amzn-trace-id", trace)
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: "c6af9ac6-7b61-11e6-9a41-93e812345678"})
	ev := events.APIGatewayV2HTTPRequest{RawPath: api.BasePath + "/health"}
	ev.RequestContext.HTTP.Method = http.MethodGet
	if _, err := h.Lambda(ctx, ev); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, api.BasePath+"/health", nil)
	h.ServeHTTP(httptest.NewRecorder(), req)
	var lines []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "request" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("%d request lines:\n%s", len(lines), logs)
	}
	if lines[0]["request_id"] != "c6af9ac6-7b61-11e6-9a41-93e812345678" || lines[0]["xray_trace_id"] != trace {
		t.Errorf("the Lambda request's line: %v", lines[0])
	}
	if lines[1]["request_id"] != "" || lines[1]["xray_trace_id"] != "" {
		t.Errorf("the local request's line: %v", lines[1])
	}
}
