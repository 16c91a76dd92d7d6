// Package obs is the service's observability seam: structured JSON logs (log/slog) and
// CloudWatch Embedded Metric Format metrics on stdout.
package obs

import (
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
)

// Service is the service name in logs and metric dimensions.
const Service = "mobilityops-knowledge"

// Namespace is the CloudWatch metric namespace.
const Namespace = "MobilityOpsKnowledge"

// NewLogger returns a JSON logger with the service and function name on every line.
func NewLogger(w io.Writer, level, function string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})).
		With("service", Service, "function_name", function)
}

// EMF writes counters as CloudWatch Embedded Metric Format lines; CloudWatch Logs turns them
// into metrics with no API call from the function.
type EMF struct {
	mu       sync.Mutex
	w        io.Writer
	function string
	now      func() time.Time
}

// NewEMF returns a metric writer for one function.
func NewEMF(w io.Writer, function string) *EMF { return &EMF{w: w, function: function, now: time.Now} }

// Count records n occurrences of a count metric.
func (e *EMF) Count(name string, n int) {
	e.Emit(nil, domain.Metric{Name: name, Unit: "Count", Value: float64(n)})
}

// Emit writes one EMF line with several metrics that share extra dimensions (for example the
// retrieval layer of a lookup) besides service and function_name.
func (e *EMF) Emit(dims map[string]string, metrics ...domain.Metric) {
	names := []string{"service", "function_name"}
	line := map[string]any{"service": Service, "function_name": e.function}
	for _, k := range slices.Sorted(maps.Keys(dims)) {
		names = append(names, k)
		line[k] = dims[k]
	}
	defs := make([]any, 0, len(metrics))
	for _, m := range metrics {
		defs = append(defs, map[string]string{"Name": m.Name, "Unit": m.Unit})
		line[m.Name] = m.Value
	}
	line["_aws"] = map[string]any{
		"Timestamp": e.now().UnixMilli(),
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace":  Namespace,
			"Dimensions": [][]string{names},
			"Metrics":    defs,
		}},
	}
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, _ = e.w.Write(append(b, '\n'))
}

// Discard is a metric sink that records nothing, for tests and tools.
type Discard struct{}

// Count implements the sink.
func (Discard) Count(string, int) {}

// Emit implements the sink.
func (Discard) Emit(map[string]string, ...domain.Metric) {}
