package api_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
)

var (
	syncWorkflow = map[string]string{"sub": "sync-workflow", "scope": "knowledge:sync:report"}
	syncOperator = map[string]string{"sub": "sync-operator", "scope": "knowledge:sync"}
	jsonBody     = map[string]string{"content-type": "application/json"}
)

func report(runID, finished string, synced int) string {
	return `{"run_id":"` + runID + `","language":"en","synced_document_count":` + strconv.Itoa(synced) +
		`,"failed_document_count":0,"finished_at":"` + finished + `"}`
}

func TestSyncReportsAreIdempotentAndNewestWins(t *testing.T) {
	h, _ := newHandler(t, api.AuthJWT)
	post := func(body string) (int, map[string]any) {
		t.Helper()
		resp, b := call(t, h, event("POST", "/api/v1/knowledge/sync-reports", body, syncWorkflow, jsonBody))
		return resp.StatusCode, b
	}
	if st, b := post(report("run-2", "2026-11-29T18:00:00Z", 11)); st != 202 || b["stored"] != true || b["latest"] != true {
		t.Fatalf("first report: %d %v", st, b)
	}
	// A duplicate of the latest report says it is the latest: latest is whether the report of
	// this run_id is the newest after the call, whichever copy stored it.
	if st, b := post(report("run-2", "2026-11-29T18:00:00Z", 11)); st != 200 || b["duplicate"] != true || b["stored"] != false || b["latest"] != true {
		t.Fatalf("same run_id again: %d %v", st, b)
	}
	if st, b := post(report("run-2", "2026-11-29T18:00:00Z", 9)); st != 200 || b["duplicate"] != true || b["differs"] != true {
		t.Fatalf("same run_id with other figures: %d %v", st, b)
	}
	if st, b := post(report("run-1", "2026-11-29T17:00:00Z", 5)); st != 202 || b["latest"] != false {
		t.Fatalf("older report: %d %v", st, b)
	}
	_, b := call(t, h, event("GET", "/api/v1/knowledge/status", "", reader, nil))
	if b["reported_synced_document_count"] != 11.0 || b["last_sync_at"] != "2026-11-29T18:00:00Z" || b["last_sync_run_id"] != "run-2" {
		t.Fatalf("status after the reports: %v", b)
	}
	if b["document_count"] != 11.0 || b["statistics_state"] != "verified" || b["source_document_count"] != 11.0 {
		t.Fatalf("status: %v", b)
	}
}

func TestSyncReportValidation(t *testing.T) {
	h, _ := newHandler(t, api.AuthJWT)
	cases := map[string]struct{ body, field string }{
		"no run_id":       {`{"language":"en","synced_document_count":1,"failed_document_count":0,"finished_at":"2026-11-29T18:00:00Z"}`, "run_id"},
		"bad run_id":      {strings.Replace(report("x", "2026-11-29T18:00:00Z", 1), `"x"`, `"a b"`, 1), "run_id"},
		"all language":    {strings.Replace(report("r", "2026-11-29T18:00:00Z", 1), `"en"`, `"all"`, 1), "language"},
		"negative":        {report("r", "2026-11-29T18:00:00Z", -1), "synced_document_count"},
		"not a time":      {report("r", "yesterday", 1), "finished_at"},
		"in the future":   {report("r", "2099-01-01T00:00:00Z", 1), "finished_at"},
		"in 1600":         {report("r", "1600-06-01T12:00:00Z", 1), "finished_at"},
		"before 2000":     {report("r", "1999-12-31T23:59:59+00:00", 1), "finished_at"},
		"count as string": {strings.Replace(report("r", "2026-11-29T18:00:00Z", 1), `:1,`, `:"1",`, 1), "synced_document_count"},
	}
	for name, tc := range cases {
		resp, b := call(t, h, event("POST", "/api/v1/knowledge/sync-reports", tc.body, syncWorkflow, jsonBody))
		e, _ := b["error"].(map[string]any)
		if resp.StatusCode != 400 || e["field"] != tc.field {
			t.Errorf("%s: %d %v", name, resp.StatusCode, b)
		}
	}
	if resp, _ := call(t, h, event("POST", "/api/v1/knowledge/sync-reports", report("r", "2000-01-01T00:00:00Z", 1), syncWorkflow, jsonBody)); resp.StatusCode != 202 {
		t.Errorf("a report of 2000-01-01T00:00:00Z: %d", resp.StatusCode)
	}
	// The report scope is its own: the sync scope does not admit a report, nor the reverse.
	if resp, _ := call(t, h, event("POST", "/api/v1/knowledge/sync-reports", report("r", "2026-11-29T18:00:00Z", 1), syncOperator, jsonBody)); resp.StatusCode != 403 {
		t.Errorf("sync scope on sync-reports: %d", resp.StatusCode)
	}
	if resp, _ := call(t, h, event("POST", "/api/v1/knowledge/sync", `{"language":"en"}`, syncWorkflow, jsonBody)); resp.StatusCode != 403 {
		t.Errorf("report scope on sync: %d", resp.StatusCode)
	}
}

func TestManifestSyncWithTheDemoProvider(t *testing.T) {
	h, _ := newHandler(t, api.AuthJWT)
	resp, b := call(t, h, event("POST", "/api/v1/knowledge/sync", `{"language":"de"}`, syncOperator, jsonBody))
	res, _ := b["results"].([]any)
	if resp.StatusCode != 200 || len(res) != 1 || b["run_id"] == "" {
		t.Fatalf("sync: %d %v", resp.StatusCode, b)
	}
	r := res[0].(map[string]any)
	if r["language"] != "de" || r["documents"] != 11.0 || r["uploaded"] != 0.0 || !strings.Contains(r["note"].(string), "nothing was uploaded") {
		t.Errorf("demo sync result %v", r)
	}
	for _, body := range []string{`{}`, `{"language":"fr"}`, `{"language":7}`} {
		if resp, _ := call(t, h, event("POST", "/api/v1/knowledge/sync", body, syncOperator, jsonBody)); resp.StatusCode != 400 {
			t.Errorf("sync %s: %d", body, resp.StatusCode)
		}
	}
}

func TestStatusLanguageParameter(t *testing.T) {
	h, _ := newHandler(t, api.AuthJWT)
	for query, want := range map[string]int{"": 200, "language=de": 200, "language=fr": 400, "language=en&language=de": 400} {
		ev := event("GET", "/api/v1/knowledge/status", "", reader, nil)
		ev.RawQueryString = query
		resp, b := call(t, h, ev)
		if resp.StatusCode != want {
			t.Errorf("?%s: %d %v", query, resp.StatusCode, b)
		}
		if want == 200 && b["language"] == nil {
			t.Errorf("?%s: %v", query, b)
		}
	}
}
