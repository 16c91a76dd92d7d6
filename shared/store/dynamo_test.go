package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal/ddbtest"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store/storetest"
)

// One DynamoDB Local serves every test of this package (ddbtest starts it on first use).
func TestMain(m *testing.M) { ddbtest.Main(m) }

// dynamo is the client for the package's DynamoDB Local.
func dynamo(t *testing.T) *dynamodb.Client {
	_, c := ddbtest.Local(t)
	return c
}

// newTable creates a fresh table from template.yaml's definition.
func newTable(t *testing.T) string { return ddbtest.NewTable(t, "knowledge-test") }

func TestDynamoConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Records {
		return store.NewDynamo(dynamo(t), newTable(t), ddblocal.CallTimeout, now)
	})
}

// TestDynamoProbe: the probe /health uses answers on a table that answers (DynamoDB Local) and
// fails on one it cannot reach.
func TestDynamoProbe(t *testing.T) {
	if err := store.NewDynamo(dynamo(t), newTable(t), ddblocal.CallTimeout, nil).Probe(context.Background()); err != nil {
		t.Fatalf("DynamoDB Local: %v", err)
	}
	client, err := store.NewDynamoClient(context.Background(), store.ClientOptions{Endpoint: "http://" + testutil.ClosedAddr(t), MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.NewDynamo(client, "knowledge", time.Second, nil).Probe(context.Background()); err == nil {
		t.Fatal("a table at a closed port answered the probe")
	}
}

func TestTableMatchesTemplate(t *testing.T) {
	name := newTable(t)
	out, err := dynamo(t).DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: &name})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Table.KeySchema) != 2 || aws.ToString(out.Table.KeySchema[0].AttributeName) != "pk" || out.Table.KeySchema[1].KeyType != types.KeyTypeRange {
		t.Fatalf("key schema %+v", out.Table.KeySchema)
	}
	ttl, err := dynamo(t).DescribeTimeToLive(context.Background(), &dynamodb.DescribeTimeToLiveInput{TableName: &name})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(ttl.TimeToLiveDescription.AttributeName) != "expires_at" {
		t.Fatalf("TTL %+v", ttl.TimeToLiveDescription)
	}
}

// TestTraceItemLayout reads a stored trace the way an operator would with the AWS CLI: the TTL
// attribute is a number, the details are a map, and no attribute holds the question.
func TestTraceItemLayout(t *testing.T) {
	name := newTable(t)
	s := store.NewDynamo(dynamo(t), name, ddblocal.CallTimeout, nil)
	now := time.Now().UTC()
	tr := lookup.Trace{InvocationID: "INVLAYOUT", Tool: lookup.ToolLookup, CreatedAt: now, ActorID: "agent-7",
		QuestionSHA256: "abc", QuestionChars: 12, Language: "en", ExpiresAt: now.Add(30 * 24 * time.Hour),
		RetrievalDetails: lookup.TraceDetails{Layer: lookup.LayerBoth, L0: lookup.L0Hints{MatchedKeywords: []string{"scratch"}}}}
	if err := s.PutTrace(context.Background(), tr); err != nil {
		t.Fatal(err)
	}
	out, err := dynamo(t).GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &name, Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "INV#INVLAYOUT"}, "sk": &types.AttributeValueMemberS{Value: "TRACE"}}})
	if err != nil {
		t.Fatal(err)
	}
	exp, ok := out.Item["expires_at"].(*types.AttributeValueMemberN)
	if !ok || exp.Value != fmt.Sprint(tr.ExpiresAt.Unix()+1) && exp.Value != fmt.Sprint(tr.ExpiresAt.Unix()) {
		t.Fatalf("expires_at %#v, want epoch seconds %d", out.Item["expires_at"], tr.ExpiresAt.Unix())
	}
	if _, ok := out.Item["retrieval_details"].(*types.AttributeValueMemberM); !ok {
		t.Fatalf("retrieval_details is %T, want a map", out.Item["retrieval_details"])
	}
	for k := range out.Item {
		if k == "question" || k == "question_text" {
			t.Fatalf("attribute %q holds question text", k)
		}
	}
}

// TestStoreErrorsCarryContext checks that a failing table is reported with what failed.
func TestStoreErrorsCarryContext(t *testing.T) {
	s := store.NewDynamo(dynamo(t), "no-such-table", ddblocal.CallTimeout, nil)
	err := s.PutTrace(context.Background(), lookup.Trace{InvocationID: "X1", ExpiresAt: time.Now().Add(time.Hour)})
	var rnf *types.ResourceNotFoundException
	if !errors.As(err, &rnf) || !strings.Contains(err.Error(), "put trace X1") {
		t.Fatalf("err = %v", err)
	}
}

// TestThrottlingIsRetriedBounded points the client at a server that answers like DynamoDB under
// throttling: the SDK's standard retryer tries a bounded number of times and then reports it.
func TestThrottlingIsRetriedBounded(t *testing.T) {
	var calls atomic.Int64
	failures := int64(2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if n <= failures {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"__type": "com.amazonaws.dynamodb.v20120810#ThrottlingException", "message": "Rate exceeded"})
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	c, err := store.NewDynamoClient(context.Background(), store.ClientOptions{Endpoint: srv.URL, MaxAttempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	s := store.NewDynamo(c, "t", 5*time.Second, nil)
	tr := lookup.Trace{InvocationID: "R1", ExpiresAt: time.Now().Add(time.Hour)}
	if err := s.PutTrace(context.Background(), tr); err != nil {
		t.Fatalf("two throttles then success: %v", err)
	}
	if calls.Load() != 3 {
		t.Fatalf("%d calls, want 3", calls.Load())
	}
	calls.Store(0)
	failures = 100
	if err := s.PutTrace(context.Background(), tr); err == nil {
		t.Fatal("endless throttling succeeded")
	}
	if calls.Load() != 3 {
		t.Fatalf("%d attempts, want the bound of 3", calls.Load())
	}
}

// TestEveryCallHasADeadline points the store at a server that never answers.
func TestEveryCallHasADeadline(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer srv.Close()
	defer close(block)
	c, err := store.NewDynamoClient(context.Background(), store.ClientOptions{Endpoint: srv.URL, MaxAttempts: 1, HTTPTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := store.NewDynamo(c, "t", 200*time.Millisecond, nil)
	start := time.Now()
	_, err = s.GetTrace(context.Background(), "X")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("the call outlived its deadline by far")
	}
}

// TestTraceItemIsTheLoggedRecord stores a trace and reads the raw item back: it is exactly
// lookup.TraceItem, the record a failed write logs for replay, attribute by attribute.
func TestTraceItemIsTheLoggedRecord(t *testing.T) {
	name := newTable(t)
	s := store.NewDynamo(dynamo(t), name, ddblocal.CallTimeout, nil)
	now := time.Date(2099, 1, 2, 3, 4, 5, 678900000, time.UTC)
	cat := "damage"
	tr := lookup.Trace{InvocationID: "INVITEM", Tool: lookup.ToolAsk, CreatedAt: now, ActorID: "agent-7",
		QuestionSHA256: "abc", QuestionChars: 12, Language: "de", ExpiresAt: now.Add(30 * 24 * time.Hour),
		RetrievalDetails: lookup.TraceDetails{Layer: lookup.LayerBoth, EvidenceState: port.StateGrounded,
			L0: lookup.L0Hints{MatchedKeywords: []string{"kratzer"}, MatchedTitles: []string{}},
			L1: lookup.L1Details{Status: lookup.L1Failed, Provider: "ragcore", CategoryFilter: &cat, ErrorClass: "timeout"},
			EvidenceSummaries: []lookup.BlockSummary{{Source: "procedures/de/x.md#a", Score: &port.Score{Value: 0.8125, Kind: "cosine_similarity", HigherIsBetter: true},
				HitReasons: []string{"l0:keyword:kratzer"}, Content: "Text"}},
			Sidecar:   lookup.SidecarStatus{Enabled: true, Status: "ok", Comparison: &lookup.Comparison{OverlapAtK: 0.5}},
			LatencyMs: lookup.Latency{L0: 0.031, L1: 12.5, Total: 13.25}}}
	if err := s.PutTrace(context.Background(), tr); err != nil {
		t.Fatal(err)
	}
	out, err := dynamo(t).GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &name, Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "INV#INVITEM"}, "sk": &types.AttributeValueMemberS{Value: "TRACE"}}})
	if err != nil {
		t.Fatal(err)
	}
	var stored map[string]any
	if err := attributevalue.UnmarshalMap(out.Item, &stored); err != nil {
		t.Fatal(err)
	}
	rec, err := lookup.TraceItem(tr)
	if err != nil {
		t.Fatal(err)
	}
	logged := viaJSON(t, rec) // as a log line carries it
	if got := viaJSON(t, stored); !reflect.DeepEqual(got, logged) {
		t.Fatalf("the table item and the logged record differ:\n item %v\n  log %v", got, logged)
	}
	back, err := lookup.TraceFromItem(logged)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetTrace(context.Background(), "INVITEM"); !reflect.DeepEqual(viaJSON(t, got), viaJSON(t, back)) {
		t.Fatalf("the logged record decodes to another trace than the stored one:\n%+v\n%+v", back, got)
	}
}

func viaJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestItemsKeepTheirAttributes: the items written before the store had item types of its own
// read the same, because the attributes are the same, name by name.
func TestItemsKeepTheirAttributes(t *testing.T) {
	name := newTable(t)
	s := store.NewDynamo(dynamo(t), name, ddblocal.CallTimeout, nil)
	ns := domain.Namespace{Tenant: "t", Workspace: "w", Collection: "c"}
	ctx := context.Background()
	finished := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	if _, err := s.PutSyncReport(ctx, ns, domain.SyncReport{RunID: "run-1", Language: "en", Synced: 11, FinishedAt: finished}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutVerification(ctx, ns, "en", store.Verification{VerificationResult: domain.VerificationResult{Checked: 11, Confirmed: 11, Complete: true}}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.AcquireLease(ctx, "verify-en", "me", time.Minute); err != nil || !ok {
		t.Fatal(ok, err)
	}
	for _, tc := range []struct {
		pk, sk string
		want   []string
	}{
		{"SYNC#t#w#c", "RUN#run-1#en", []string{"failed_document_count", "finished_at", "language", "pk", "received_at", "run_id", "sk", "synced_document_count"}},
		{"SYNC#t#w#c", "LATEST#en", []string{"failed_document_count", "finished_at", "finished_at_ns", "language", "pk", "received_at", "run_id", "sk", "synced_document_count"}},
		{"VERIFY#t#w#c", "LANG#en", []string{"checked", "complete", "confirmed", "corpus_fingerprint", "duration_ms", "errors", "expires_at", "failed", "missing", "not_indexed", "outdated", "pk", "sk", "stored_at", "verified_at"}},
		{"LEASE#verify-en", "LEASE", []string{"expires_at", "expires_at_ms", "owner", "pk", "sk"}},
	} {
		out, err := dynamo(t).GetItem(ctx, &dynamodb.GetItemInput{TableName: &name, Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: tc.pk}, "sk": &types.AttributeValueMemberS{Value: tc.sk}}})
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Sorted(maps.Keys(out.Item))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %s: attributes %v, want %v", tc.pk, tc.sk, got, tc.want)
		}
	}
}

// TestLatestWrittenWithAnOverflowedOrderIsRepaired: a latest item for a report before 1678 that
// carries an int64 of nanoseconds that overflowed (it orders 1600 after every other year), or
// no order at all. The next newer report replaces it; an item whose order
// is right still keeps an older report out.
func TestLatestWrittenWithAnOverflowedOrderIsRepaired(t *testing.T) {
	ns := domain.Namespace{Tenant: "t", Workspace: "w", Collection: "c"}
	y1600 := time.Date(1600, 6, 1, 12, 0, 0, 0, time.UTC)
	y2026 := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		order types.AttributeValue // finished_at_ns as an int64 count; nil: none
	}{
		{"overflowed", &types.AttributeValueMemberN{Value: fmt.Sprint(y1600.UnixNano())}},
		{"absent", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := newTable(t)
			s := store.NewDynamo(dynamo(t), name, ddblocal.CallTimeout, nil)
			ctx := context.Background()
			if _, err := s.PutSyncReport(ctx, ns, domain.SyncReport{RunID: "run-1600", Language: "en", Synced: 1, FinishedAt: y1600}); err != nil {
				t.Fatal(err)
			}
			// Rewrite the latest item with that order.
			out, err := dynamo(t).GetItem(ctx, &dynamodb.GetItemInput{TableName: &name, Key: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: "SYNC#t#w#c"}, "sk": &types.AttributeValueMemberS{Value: "LATEST#en"}}})
			if err != nil || len(out.Item) == 0 {
				t.Fatal(out, err)
			}
			if tc.order == nil {
				delete(out.Item, "finished_at_ns")
			} else {
				out.Item["finished_at_ns"] = tc.order
			}
			if _, err := dynamo(t).PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: out.Item}); err != nil {
				t.Fatal(err)
			}
			res, err := s.PutSyncReport(ctx, ns, domain.SyncReport{RunID: "run-2026", Language: "en", Synced: 11, FinishedAt: y2026})
			if err != nil || !res.Latest {
				t.Fatalf("the report of 2026 after a stale latest of 1600: %+v %v", res, err)
			}
			if latest, err := s.LatestSyncReport(ctx, ns, "en"); err != nil || latest.RunID != "run-2026" {
				t.Fatalf("latest %+v %v, want run-2026", latest, err)
			}
			res, err = s.PutSyncReport(ctx, ns, domain.SyncReport{RunID: "run-2025", Language: "en", Synced: 9, FinishedAt: y2026.AddDate(-1, 0, 0)})
			if err != nil || res.Latest {
				t.Fatalf("an older report after the repair: %+v %v", res, err)
			}
			if latest, _ := s.LatestSyncReport(ctx, ns, "en"); latest.RunID != "run-2026" {
				t.Fatalf("latest %s, want run-2026", latest.RunID)
			}
		})
	}
}
