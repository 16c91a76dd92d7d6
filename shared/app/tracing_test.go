package app

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/otlptest"
)

// callerTrace is an incoming X-Ray trace header: the spans of the call continue its trace
// (67891233abcdef012345678912345678) under its parent (53995c3f42cd8ad8).
const callerTrace = "Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1"

// TestOTelSpansOfALookup runs a lookup through the local API with TRACING=otel against an
// in-process OTLP receiver, on RAGcore (the fake) with the sidecar on: every step is a span of
// the caller's trace under the handler's span, the outbound calls are spans under their step,
// the handler carries the annotations, and no span holds the question's text. Then GET /status
// traces its verification run and RAGcore calls the same way.
func TestOTelSpansOfALookup(t *testing.T) {
	rag, _ := embeddedRAGcore(t)
	bedrock, _ := fakeBedrock(t, "ok")
	rcv := otlptest.New(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.Endpoint)
	a := newApp(t, map[string]string{"TRACING": "otel", "OTEL_TRACES_EXPORTER": "otlp", "AUTH_MODE": "local-headers",
		"KNOWLEDGE_PROVIDER": "ragcore", "RAGCORE_BASE_URL": rag.URL, "RAGCORE_TOKEN": "t",
		"SIDECAR_ENABLED": "true", "BEDROCK_KNOWLEDGE_BASE_ID": "KB1", "BEDROCK_ENDPOINT": bedrock.URL})
	srv := httptest.NewServer(a.Handler.HTTP(RequestTimeout))
	defer srv.Close()

	question := "A customer found a deep scratch on the rear door before starting the trip"
	status, body := request(t, srv.URL+"/api/v1/knowledge/lookup", `{"question":"`+question+`","language":"en"}`)
	if status != http.StatusOK {
		t.Fatalf("lookup: %d %s", status, body)
	}
	spans := rcv.Spans() // the handler flushed before answering
	byName := map[string]otlptest.Span{}
	for _, s := range spans {
		if s.TraceID != "67891233abcdef012345678912345678" {
			t.Errorf("span %s in trace %s, not the caller's", s.Name, s.TraceID)
		}
		for _, leak := range []string{question, "deep scratch", "rear door"} {
			if bytes.Contains(s.Raw, []byte(leak)) {
				t.Errorf("span %s holds the question's text %q", s.Name, leak)
			}
		}
		byName[s.Name] = s
	}
	handler := byName["handler"]
	if handler.ParentSpanID != "53995c3f42cd8ad8" {
		t.Fatalf("handler's parent %q; spans %v", handler.ParentSpanID, names(spans))
	}
	for _, step := range []string{"l0", "l1", "lexical", "fusion", "verdict", "trace_write", "sidecar"} {
		if s, ok := byName[step]; !ok || s.ParentSpanID != handler.SpanID {
			t.Errorf("step %s: %+v not under the handler (%v)", step, s, names(spans))
		}
	}
	var ragcore, bedrockCall bool
	for _, s := range spans {
		ragcore = ragcore || strings.HasPrefix(s.Name, "POST ") && s.ParentSpanID == byName["l1"].SpanID
		bedrockCall = bedrockCall || strings.HasPrefix(s.Name, "Bedrock") && s.ParentSpanID == byName["sidecar"].SpanID
	}
	if !ragcore || !bedrockCall {
		t.Errorf("outbound calls: RAGcore under l1 %v, Bedrock under sidecar %v (%v)", ragcore, bedrockCall, names(spans))
	}
	keys := slices.Sorted(slices.Values(handler.Lists["aws.xray.annotations"]))
	if !slices.Equal(keys, []string{"evidence_state", "invocation_id", "language", "layer", "provider"}) {
		t.Errorf("annotation keys %v", keys)
	}
	if at := handler.Attributes; at["provider"] != "ragcore" || at["language"] != "en" || at["evidence_state"] == "" ||
		at["layer"] == "" || !strings.Contains(body, `"invocation_id":"`+at["invocation_id"]+`"`) {
		t.Errorf("annotations %v for %s", at, body)
	}

	// GET /status: the verification run and its RAGcore calls.
	before := len(spans)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/knowledge/status?language=de", nil)
	req.Header.Set("X-Actor-Id", "agent-7")
	req.Header.Set("X-Actor-Scope", "knowledge:read")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status: %v %v", resp, err)
	}
	resp.Body.Close()
	spans = rcv.Spans()[before:]
	var verify otlptest.Span
	for _, s := range spans {
		if s.Name == "verify" {
			verify = s
		}
	}
	calls := 0
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "GET ") && s.ParentSpanID == verify.SpanID && verify.SpanID != "" {
			calls++
		}
	}
	if verify.Attributes["language"] != "de" || calls == 0 {
		t.Errorf("verification span %+v with %d RAGcore calls (%v)", verify, calls, names(spans))
	}
}

func request(t *testing.T, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Actor-Id", "agent-7")
	req.Header.Set("X-Actor-Scope", "knowledge:read")
	req.Header.Set("X-Amzn-Trace-Id", callerTrace)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

func names(spans []otlptest.Span) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name + "<" + s.ParentSpanID
	}
	return out
}
