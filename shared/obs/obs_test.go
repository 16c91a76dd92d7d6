package obs

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
)

func TestEMFLineIsAMetric(t *testing.T) {
	var b bytes.Buffer
	NewEMF(&b, "LookupFunction").Count("TraceWriteFailures", 2)
	var line map[string]any
	if err := json.Unmarshal(b.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	aws := line["_aws"].(map[string]any)
	m := aws["CloudWatchMetrics"].([]any)[0].(map[string]any)
	if m["Namespace"] != Namespace || line["TraceWriteFailures"] != float64(2) || line["function_name"] != "LookupFunction" {
		t.Fatalf("line %s", b.String())
	}
	if _, ok := aws["Timestamp"].(float64); !ok {
		t.Fatal("no timestamp")
	}
}

func TestLoggerCarriesServiceAndFunction(t *testing.T) {
	var b bytes.Buffer
	NewLogger(&b, "info", "LookupFunction").Info("hello")
	var line map[string]any
	if err := json.Unmarshal(b.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line["service"] != Service || line["function_name"] != "LookupFunction" {
		t.Fatalf("line %s", b.String())
	}
	b.Reset()
	NewLogger(&b, "warn", "f").Info("dropped")
	if b.Len() != 0 {
		t.Fatal("level not applied")
	}
}

func TestEmitSharesDimensions(t *testing.T) {
	var b bytes.Buffer
	NewEMF(&b, "LookupFunction").Emit(map[string]string{"layer": "L0+L1", "provider": "ragcore"},
		domain.Metric{Name: "LookupLatency", Unit: "Milliseconds", Value: 3.5},
		domain.Metric{Name: "L1Failures", Unit: "Count", Value: 0})
	var line map[string]any
	if err := json.Unmarshal(b.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	m := line["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)
	dims := m["Dimensions"].([]any)[0].([]any)
	if len(dims) != 4 || dims[2] != "layer" || dims[3] != "provider" || line["layer"] != "L0+L1" || line["LookupLatency"] != 3.5 ||
		len(m["Metrics"].([]any)) != 2 {
		t.Fatalf("line %s", b.String())
	}
}
