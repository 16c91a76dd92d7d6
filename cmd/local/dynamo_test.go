package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal/ddbtest"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// TestMain stops DynamoDB Local and removes the local API built for the tests.
func TestMain(m *testing.M) {
	ddbtest.Main(m, func() {
		if buildDir != "" {
			_ = os.RemoveAll(buildDir)
		}
	})
}

// TestLookupTraceLandsInDynamoDBLocal: after a lookup through the local API on DynamoDB Local,
// the trace is in the table with the L0 hints, the layer, the counts and
// the evidence summaries, and without the question text.
func TestLookupTraceLandsInDynamoDBLocal(t *testing.T) {
	local, client := ddbtest.Local(t)
	table := ddbtest.NewTable(t, "e2e-traces")
	// The test reads the trace from the table: DynamoDB Local on a loaded machine may take longer
	// than the deployed trace wait (the guard's own tests cover the wait).
	l := startLocal(t, append([]string{"DYNAMODB_ENDPOINT=" + local.Endpoint, "TABLE_NAME=" + table}, ddblocal.TimeoutEnv...)...)
	question := "Kunde meldet Kratzer und eine Delle an der Fahrertür nach dem Parken"
	status, body := post(t, l.base+"/lookup", `{"question":"`+question+`","language":"de"}`)
	if status != 200 {
		t.Fatalf("lookup: %d %s", status, body)
	}
	var res lookup.Result
	mustDecode(t, body, &res)

	out, err := client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &table, Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "INV#" + res.InvocationID}, "sk": &types.AttributeValueMemberS{Value: "TRACE"}}})
	if err != nil || len(out.Item) == 0 {
		t.Fatalf("trace %s not in the table: %v\n%s", res.InvocationID, err, l.logs)
	}
	var item map[string]any
	if err := attributevalue.UnmarshalMap(out.Item, &item); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(item)
	if strings.Contains(string(raw), question) || strings.Contains(string(raw), "nach dem Parken") {
		t.Fatalf("the stored trace holds the question text: %s", raw)
	}
	d := item["retrieval_details"].(map[string]any)
	l0 := d["l0"].(map[string]any)
	if len(l0["matched_keywords"].([]any)) == 0 || len(l0["domains"].([]any)) == 0 {
		t.Errorf("L0 hints missing: %v", l0)
	}
	if d["layer"] != string(res.Retrieval.Layer) || d["layer"] != string(lookup.LayerBoth) {
		t.Errorf("layer %v", d["layer"])
	}
	if d["candidate_count"] != float64(res.Retrieval.CandidateCount) || d["final_block_count"] != float64(len(res.EvidenceBlocks)) {
		t.Errorf("counts %v/%v", d["candidate_count"], d["final_block_count"])
	}
	sums := d["evidence_summaries"].([]any)
	if len(sums) != len(res.EvidenceBlocks) || sums[0].(map[string]any)["source"] != res.EvidenceBlocks[0].Source {
		t.Errorf("evidence summaries %v", sums)
	}
	if _, ok := item["expires_at"].(float64); !ok {
		t.Errorf("TTL attribute %T", item["expires_at"])
	}

	// The same trace through the API.
	resp := get(t, l.base+"/invocations/"+res.InvocationID, "agent-7", "knowledge:read")
	if resp != 200 {
		t.Errorf("GET /invocations: %d", resp)
	}
}

// TestLookupSurvivesAFailingTraceStore points the local API at a DynamoDB endpoint that is not
// there: lookups still answer, the failure is logged and counted, reads of traces say so.
func TestLookupSurvivesAFailingTraceStore(t *testing.T) {
	l := startLocal(t, "DYNAMODB_ENDPOINT=http://"+testutil.ClosedAddr(t), "DYNAMODB_TIMEOUT_MS=300")
	status, body := post(t, l.base+"/lookup", `{"question":"flat tyre on the motorway, what now?"}`)
	if status != 200 {
		t.Fatalf("lookup failed with the store down: %d %s", status, body)
	}
	var res lookup.Result
	mustDecode(t, body, &res)
	if res.Primary == nil || res.Primary.DocumentID != "breakdown-assistance" {
		t.Errorf("primary %+v", res.Primary)
	}
	logs := waitFor(t, l.logs, "trace write failed")
	if !strings.Contains(logs, res.InvocationID) || !strings.Contains(logs, `"TraceWriteFailures":1`) {
		t.Errorf("failure not logged and counted with the invocation id:\n%s", logs)
	}
	if code := get(t, l.base+"/invocations/"+res.InvocationID, "agent-7", "knowledge:read"); code != 503 {
		t.Errorf("reading a trace from a missing store: %d, want 503", code)
	}
}

func waitFor(t *testing.T, logs *testutil.SyncBuffer, what string) string {
	t.Helper()
	for range 50 {
		if s := logs.String(); strings.Contains(s, what) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the log never said %q:\n%s", what, logs)
	return ""
}

// TestSyncReportOf1600NeverHidesToday: on DynamoDB Local, a report finished in 1600 (stored
// directly: the API refuses it) and then one of today: the report of today is the latest,
// and /status shows it.
func TestSyncReportOf1600NeverHidesToday(t *testing.T) {
	local, client := ddbtest.Local(t)
	table := ddbtest.NewTable(t, "e2e-reports")
	ns := domain.Namespace{Tenant: "northstar-mobility-demo", Workspace: "mobilityops", Collection: "internal-procedures"}
	old := domain.SyncReport{RunID: "run-1600", Language: "en", Synced: 11, FinishedAt: time.Date(1600, 6, 1, 12, 0, 0, 0, time.UTC)}
	if _, err := store.NewDynamo(client, table, ddblocal.CallTimeout, nil).PutSyncReport(context.Background(), ns, old); err != nil {
		t.Fatal(err)
	}
	l := startLocal(t, append([]string{"DYNAMODB_ENDPOINT=" + local.Endpoint, "TABLE_NAME=" + table}, ddblocal.TimeoutEnv...)...)
	send := func(runID, finished string) (int, map[string]any) {
		t.Helper()
		body := `{"run_id":"` + runID + `","language":"en","synced_document_count":11,"failed_document_count":0,"finished_at":"` + finished + `"}`
		return call(t, "POST", l.base+"/sync-reports", body, "knowledge:sync:report")
	}
	if code, b := send("run-1600-again", "1600-06-01T12:00:00Z"); code != 400 || b["error"].(map[string]any)["field"] != "finished_at" {
		t.Errorf("a report of 1600 through the API: %d %v", code, b)
	}
	today := time.Now().UTC().Add(-time.Minute).Truncate(time.Second).Format(time.RFC3339)
	if code, b := send("run-today", today); code != 202 || b["latest"] != true {
		t.Fatalf("the report of today: %d %v", code, b)
	}
	code, b := call(t, "GET", l.base+"/status?language=en", "", "knowledge:read")
	if code != 200 || b["last_sync_at"] != today || b["last_sync_run_id"] != "run-today" {
		t.Fatalf("status after a report of 1600 and one of today (%s): %d %v", today, code, b)
	}
}

// call sends one request as agent-7 with scope and decodes the JSON answer.
func call(t *testing.T, method, url, body, scope string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Actor-Id", "agent-7")
	req.Header.Set("X-Actor-Scope", scope)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}
