// Package otlptest is an in-process OTLP/HTTP receiver for tests: it accepts what an
// OpenTelemetry OTLP exporter sends to /v1/traces (protobuf, optionally gzipped), decodes it with
// the OTLP protocol's own Go types, and keeps the spans.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, its ids in hex and its string and string-list attributes.
type Span struct {
	Name, TraceID, SpanID, ParentSpanID string
	Attributes                          map[string]string
	Lists                               map[string][]string
	// Raw is the span's encoding, for checks that nothing in it holds a text.
	Raw []byte
}

// Receiver is the receiver; Endpoint is its base URL (OTEL_EXPORTER_OTLP_ENDPOINT).
type Receiver struct {
	Endpoint string
	mu       sync.Mutex
	spans    []Span
}

// New starts a receiver, closed at the end of the test.
func New(t testing.TB) *Receiver {
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.Endpoint = srv.URL
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.NotFound(w, req)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	var in coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(raw, &in)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	for _, rs := range in.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				sp := Span{Name: s.Name, TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
					ParentSpanID: hex.EncodeToString(s.ParentSpanId), Attributes: map[string]string{}, Lists: map[string][]string{}}
				sp.Raw, _ = proto.Marshal(s)
				for _, kv := range s.Attributes {
					addAttribute(&sp, kv)
				}
				r.spans = append(r.spans, sp)
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func addAttribute(sp *Span, kv *commonpb.KeyValue) {
	switch v := kv.Value.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		sp.Attributes[kv.Key] = v.StringValue
	case *commonpb.AnyValue_ArrayValue:
		for _, e := range v.ArrayValue.Values {
			sp.Lists[kv.Key] = append(sp.Lists[kv.Key], e.GetStringValue())
		}
	}
}

// Spans are the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}
