package obs

import (
	"bytes"
	"encoding/json"
	"testing"
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
