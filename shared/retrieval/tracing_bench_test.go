package retrieval_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/demo"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/tracing"
)

// BenchmarkLookupTraced measures what tracing adds to one lookup (docs/retrieval.md): the
// lookup of BenchmarkLookup's English question inside an invocation's span, as the handler opens
// and ends it, under each tracer. off: no tracer (BenchmarkLookup's figure plus the seam's
// context look-ups); xray: the X-Ray SDK, the segment sent over UDP to a local listener standing
// in for the daemon; otel-none: OpenTelemetry recording the spans without exporting them;
// otel-otlp: OpenTelemetry exporting them over OTLP/HTTP to a local receiver, flushed at the end
// of every invocation as in Lambda.
func BenchmarkLookupTraced(b *testing.B) {
	ix := index(b)
	svc := retrieval.New(ix, demo.New(ix), store.NewMemory(), retrieval.DefaultOptions(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	req := lookup.LookupRequest{Question: "A customer found a deep scratch on the rear door before the trip. What do we do?",
		Language: "en", TopK: 5, Actor: port.Actor{ID: "bench"}}
	daemon, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer daemon.Close()
	go func() { // drain, as the daemon would
		buf := make([]byte, 64<<10)
		for {
			if _, _, err := daemon.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer receiver.Close()
	b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.URL)
	const header = "Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1"
	for _, tc := range []struct {
		name string
		opts tracing.Options
	}{
		{"off", tracing.Options{Mode: tracing.ModeOff}},
		{"xray", tracing.Options{Mode: tracing.ModeXRay, XRayDaemonAddress: daemon.LocalAddr().String()}},
		{"otel-none", tracing.Options{Mode: tracing.ModeOTel, Exporter: tracing.ExporterNone}},
		{"otel-otlp", tracing.Options{Mode: tracing.ModeOTel, Exporter: tracing.ExporterOTLP}},
	} {
		tr := tracing.New(tc.opts)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ctx, end := tr.Invocation(context.Background(), "handler", header)
				if _, err := svc.Lookup(ctx, req); err != nil {
					b.Fatal(err)
				}
				end()
			}
		})
	}
}
