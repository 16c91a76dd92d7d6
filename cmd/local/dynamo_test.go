package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal/ddbtest"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
)

func TestMain(m *testing.M) { ddbtest.Main(m) }

// TestLookupTraceLandsInDynamoDBLocal is issue 3's acceptance: after a lookup through the local
// API on DynamoDB Local, the trace is in the table with the L0 hints, the layer, the counts and
// the evidence summaries, and without the question text.
func TestLookupTraceLandsInDynamoDBLocal(t *testing.T) {
	local, client := ddbtest.Local(t)
	table := ddbtest.NewTable(t, "e2e-traces")
	l := startLocal(t, "DYNAMODB_ENDPOINT="+local.Endpoint, "TABLE_NAME="+table)
	question := "Kunde meldet Kratzer und eine Delle an der Fahrertür nach dem Parken"
	status, body := post(t, l.base+"/lookup", `{"question":"`+question+`","language":"de"}`)
	if status != 200 {
		t.Fatalf("lookup: %d %s", status, body)
	}
	var res retrieval.Result
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
	if d["layer"] != res.Retrieval.Layer || d["layer"] != retrieval.LayerBoth {
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
	var res retrieval.Result
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
