package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
)

// DynamoAPI is the part of the DynamoDB client the store uses.
type DynamoAPI interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

var _ DynamoAPI = (*dynamodb.Client)(nil)

// Dynamo keeps the records in one DynamoDB table (single-table design, see docs/operations.md):
//
//	pk                     sk                 record
//	INV#<invocation_id>    TRACE              invocation trace, TTL expires_at
//	VERIFY#<namespace>     LANG#<language>    verification cache entry, TTL expires_at
//	SYNC#<namespace>       RUN#<run_id>#<lang> sync report (audit, kept), written once
//	SYNC#<namespace>       LATEST#<language>  newest sync report of a language
//	LEASE#<name>           LEASE              short lease against duplicate work, TTL expires_at
//
// <namespace> is tenant#workspace#collection. expires_at is the TTL attribute (epoch seconds);
// DynamoDB deletes late, so every read also compares the record's own expiry with the clock.
type Dynamo struct {
	db      DynamoAPI
	table   string
	timeout time.Duration
	now     func() time.Time
}

var _ Records = (*Dynamo)(nil)

// NewDynamo returns the DynamoDB store on table. callTimeout bounds every call, retries included;
// <= 0 means config.DefaultDynamoDBTimeout. now nil means the wall clock.
func NewDynamo(db DynamoAPI, table string, callTimeout time.Duration, now func() time.Time) *Dynamo {
	if callTimeout <= 0 {
		callTimeout = config.DefaultDynamoDBTimeout
	}
	if now == nil {
		now = time.Now
	}
	return &Dynamo{db: db, table: table, timeout: callTimeout, now: now}
}

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func number(n attributevalue.Number) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: string(n)}
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

// epochCeil is t in whole seconds, rounded up, for the TTL attribute (exact, for any time).
func epochCeil(t time.Time) int64 {
	if t.Nanosecond() > 0 {
		return t.Unix() + 1
	}
	return t.Unix()
}

// PutTrace implements Records.
func (d *Dynamo) PutTrace(ctx context.Context, t lookup.Trace) error {
	_, err := d.putTrace(ctx, t, false)
	return err
}

// PutTraceIfAbsent stores a trace unless its invocation id is stored already (a condition
// expression on the key), so that replaying a trace twice stores it once. It reports whether
// this call stored it.
func (d *Dynamo) PutTraceIfAbsent(ctx context.Context, t lookup.Trace) (bool, error) {
	return d.putTrace(ctx, t, true)
}

func (d *Dynamo) putTrace(ctx context.Context, t lookup.Trace, ifAbsent bool) (bool, error) {
	if t.InvocationID == "" {
		return false, ErrInvalid
	}
	item, err := traceAttributes(t)
	if err != nil {
		return false, err
	}
	in := &dynamodb.PutItemInput{TableName: &d.table, Item: item}
	if ifAbsent {
		in.ConditionExpression = aws.String("attribute_not_exists(pk)")
	}
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	_, err = d.db.PutItem(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	switch {
	case ifAbsent && errors.As(err, &ccf):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("put trace %s: %w", t.InvocationID, err)
	}
	return true, nil
}

// traceAttributes is a trace's item as DynamoDB attributes: lookup.TraceItem, the one encoding
// the store and the log fallback share, marshalled.
func traceAttributes(t lookup.Trace) (map[string]types.AttributeValue, error) {
	rec, err := lookup.TraceItem(t)
	if err != nil {
		return nil, err
	}
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return nil, fmt.Errorf("marshal trace %s: %w", t.InvocationID, err)
	}
	return item, nil
}

// GetTrace implements Records.
func (d *Dynamo) GetTrace(ctx context.Context, id string) (lookup.Trace, error) {
	pk, sk := traceKey(id)
	item, err := d.get(ctx, pk, sk)
	if err != nil {
		return lookup.Trace{}, fmt.Errorf("get trace %s: %w", id, err)
	}
	var rec map[string]any
	if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
		return lookup.Trace{}, fmt.Errorf("decode trace %s: %w", id, err)
	}
	t, err := lookup.TraceFromItem(rec)
	if err != nil {
		return lookup.Trace{}, fmt.Errorf("decode trace %s: %w", id, err)
	}
	if !d.now().Before(t.ExpiresAt) {
		return lookup.Trace{}, domain.ErrNotFound
	}
	return t, nil
}

// Probe tells cheaply whether the table answers, for GET /health: it reads one item that is
// never written (an eventually consistent GetItem, half a read unit) under the context's
// deadline and the store's own, whichever ends first.
func (d *Dynamo) Probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	if _, err := d.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &d.table, Key: key(probeKey())}); err != nil {
		return fmt.Errorf("probe table: %w", err)
	}
	return nil
}

// get reads one item with a consistent read; ErrNotFound when absent.
func (d *Dynamo) get(ctx context.Context, pk, sk string) (map[string]types.AttributeValue, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	out, err := d.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &d.table, Key: key(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	if len(out.Item) == 0 {
		return nil, domain.ErrNotFound
	}
	return out.Item, nil
}

// PutVerification stores a verification result, valid for VerificationTTL.
func (d *Dynamo) PutVerification(ctx context.Context, ns domain.Namespace, lang string, v Verification) error {
	item, err := attributevalue.MarshalMap(newVerificationItem(ns, lang, v, d.now().UTC()))
	if err != nil {
		return fmt.Errorf("marshal verification: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	if _, err := d.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &d.table, Item: item}); err != nil {
		return fmt.Errorf("put verification %s: %w", lang, err)
	}
	return nil
}

// GetVerification returns the cached result unless it is absent or older than VerificationTTL.
func (d *Dynamo) GetVerification(ctx context.Context, ns domain.Namespace, lang string) (CachedVerification, error) {
	pk, sk := verificationKey(ns, lang)
	raw, err := d.get(ctx, pk, sk)
	if err != nil {
		return CachedVerification{}, fmt.Errorf("get verification %s: %w", lang, err)
	}
	var item verificationItem
	if err := attributevalue.UnmarshalMap(raw, &item); err != nil {
		return CachedVerification{}, fmt.Errorf("decode verification %s: %w", lang, err)
	}
	stored, err := time.Parse(time.RFC3339Nano, item.StoredAt)
	if err != nil {
		return CachedVerification{}, fmt.Errorf("get verification %s: bad %s: %w", lang, attrStored, err)
	}
	c := CachedVerification{Verification: item.verification(), StoredAt: stored, ExpiresAt: stored.Add(VerificationTTL)}
	if !d.now().Before(c.ExpiresAt) {
		return CachedVerification{}, domain.ErrNotFound
	}
	if c.Missing == nil {
		c.Missing = []string{}
	}
	return c, nil
}

// PutSyncReport stores a report once per run_id and language (a condition expression makes the write
// idempotent under concurrency) and then makes the stored report the latest of its language
// unless a newer one is there (a second condition expression). The second step also runs for a
// duplicate, so that a retry after a failure between the two steps completes the first attempt.
//
// Latest is decided by the outcome of that conditional update alone, for the stored copy and for
// duplicates alike: the update succeeds when the latest pointer holds no newer report (this same
// report included), and then the pointer holds this report; it fails only when a newer report is
// there, which this one can never replace. So when copies of one report race, whichever copy's
// update lands first, every answer says latest exactly when the report is the latest after it.
func (d *Dynamo) PutSyncReport(ctx context.Context, ns domain.Namespace, r domain.SyncReport) (domain.ReportResult, error) {
	if err := checkReport(r); err != nil {
		return domain.ReportResult{}, err
	}
	if r.ReceivedAt.IsZero() {
		r.ReceivedAt = d.now().UTC()
	}
	pk, sk := syncPK(ns), runSK(r.RunID, r.Language)
	item, err := attributevalue.MarshalMap(newReportItem(pk, sk, r))
	if err != nil {
		return domain.ReportResult{}, fmt.Errorf("marshal sync report %s: %w", r.RunID, err)
	}
	var res domain.ReportResult
	putCtx, cancel := context.WithTimeout(ctx, d.timeout)
	_, err = d.db.PutItem(putCtx, &dynamodb.PutItemInput{TableName: &d.table, Item: item,
		ConditionExpression: aws.String("attribute_not_exists(pk)")})
	cancel()
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		res.Duplicate = true
		raw, err := d.get(ctx, pk, sk)
		if err != nil {
			return domain.ReportResult{}, fmt.Errorf("read stored sync report %s: %w", r.RunID, err)
		}
		var stored reportItem
		if err := attributevalue.UnmarshalMap(raw, &stored); err != nil {
			return domain.ReportResult{}, fmt.Errorf("decode sync report %s: %w", r.RunID, err)
		}
		res.Differs = !sameResult(stored.report(), r)
		r = stored.report()
	case err != nil:
		return domain.ReportResult{}, fmt.Errorf("put sync report %s: %w", r.RunID, err)
	}
	latest, err := d.promote(ctx, pk, r)
	if err != nil {
		return domain.ReportResult{}, err
	}
	res.Latest = latest
	return res, nil
}

// promote makes r the latest report of its language unless the stored one is newer; it reports
// whether the latest report is r afterwards. Writing r over itself succeeds (the same values), so
// that racing copies of one report all learn that it is the latest.
//
// The condition compares finished_at_ns (finishedOrder). A latest item whose finished_at_ns is
// not its finished_at's order (an int64 nanosecond count that overflowed for a report before
// 1678, or none at all) cannot be compared by the condition: when the write is
// refused, the stored item is read, and such an item is replaced when r is newer by the two
// finished_at times, on the condition that it is still that same item.
func (d *Dynamo) promote(ctx context.Context, pk string, r domain.SyncReport) (bool, error) {
	latest := newReportItem(pk, latestSK(r.Language), r)
	latest.FinishedAt, latest.ReceivedAt = r.FinishedAt.UTC(), r.ReceivedAt.UTC()
	latest.FinishedAtNs = finishedOrder(r.FinishedAt)
	item, err := attributevalue.MarshalMap(latest)
	if err != nil {
		return false, fmt.Errorf("marshal latest sync report %s: %w", r.RunID, err)
	}
	for range promoteAttempts {
		ok, err := d.putLatest(ctx, item, "attribute_not_exists(pk) OR finished_at_ns < :fn OR (finished_at_ns = :fn AND run_id <= :r)",
			map[string]types.AttributeValue{":r": str(r.RunID), ":fn": number(latest.FinishedAtNs)})
		if err != nil || ok {
			return ok, err
		}
		raw, err := d.get(ctx, pk, latest.SK)
		if err != nil {
			return false, fmt.Errorf("read latest sync report %s: %w", r.Language, err)
		}
		var stored reportItem
		if err := attributevalue.UnmarshalMap(raw, &stored); err != nil {
			return false, fmt.Errorf("decode latest sync report %s: %w", r.Language, err)
		}
		if stored.ordered() || !newer(r, stored.report()) {
			return false, nil // a newer report is the latest
		}
		cond, values := "run_id = :sr AND attribute_not_exists(finished_at_ns)", map[string]types.AttributeValue{":sr": str(stored.RunID)}
		if stored.FinishedAtNs != "" {
			cond = "run_id = :sr AND finished_at_ns = :stale"
			values[":stale"] = number(stored.FinishedAtNs)
		}
		if ok, err := d.putLatest(ctx, item, cond, values); err != nil || ok {
			return ok, err
		}
		// The stale item was replaced meanwhile: decide again against what is there now.
	}
	return false, fmt.Errorf("promote sync report %s: the latest report kept changing", r.RunID)
}

// promoteAttempts bounds the rounds of promote against a latest item that keeps changing.
const promoteAttempts = 3

// putLatest writes the latest item under cond; it reports false when the condition fails.
func (d *Dynamo) putLatest(ctx context.Context, item map[string]types.AttributeValue, cond string, values map[string]types.AttributeValue) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	_, err := d.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &d.table, Item: item, ConditionExpression: &cond, ExpressionAttributeValues: values,
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("promote sync report: %w", err)
	}
	return true, nil
}

// LatestSyncReport returns the newest report of a language.
func (d *Dynamo) LatestSyncReport(ctx context.Context, ns domain.Namespace, lang string) (domain.SyncReport, error) {
	raw, err := d.get(ctx, syncPK(ns), latestSK(lang))
	if err != nil {
		return domain.SyncReport{}, fmt.Errorf("get latest sync report %s: %w", lang, err)
	}
	var item reportItem
	if err := attributevalue.UnmarshalMap(raw, &item); err != nil {
		return domain.SyncReport{}, fmt.Errorf("decode latest sync report %s: %w", lang, err)
	}
	return item.report(), nil
}

// SyncReports returns every stored report of a namespace, ordered by run_id, then language.
func (d *Dynamo) SyncReports(ctx context.Context, ns domain.Namespace) ([]domain.SyncReport, error) {
	var out []domain.SyncReport
	var start map[string]types.AttributeValue
	for {
		qctx, cancel := context.WithTimeout(ctx, d.timeout)
		page, err := d.db.Query(qctx, &dynamodb.QueryInput{
			TableName:              &d.table,
			KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :run)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":pk": str(syncPK(ns)), ":run": str(runPrefix),
			},
			ExclusiveStartKey: start,
			ConsistentRead:    aws.Bool(true),
		})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("query sync reports: %w", err)
		}
		var items []reportItem
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return nil, fmt.Errorf("decode sync reports: %w", err)
		}
		for _, it := range items {
			out = append(out, it.report())
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		start = page.LastEvaluatedKey
	}
}

// AcquireLease takes the named lease for owner with one conditional write: it succeeds when no
// lease exists, when the existing one has expired (its own expires_at_ms, not the TTL
// attribute, decides), or when owner already holds it.
func (d *Dynamo) AcquireLease(ctx context.Context, name, owner string, ttl time.Duration) (bool, error) {
	now := d.now()
	pk, sk := leaseKey(name)
	item, err := attributevalue.MarshalMap(leaseItem{PK: pk, SK: sk, Owner: owner, ExpiresAtMs: now.Add(ttl).UnixMilli(),
		ExpiresAt: epochCeil(now.Add(ttl)) + 60}) // TTL only cleans up
	if err != nil {
		return false, fmt.Errorf("marshal lease %s: %w", name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	_, err = d.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                &d.table,
		Item:                     item,
		ConditionExpression:      aws.String("attribute_not_exists(pk) OR expires_at_ms < :now OR #owner = :owner"),
		ExpressionAttributeNames: map[string]string{"#owner": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now": num(now.UnixMilli()), ":owner": str(owner),
		},
	})
	var failed *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &failed):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	return true, nil
}

// ReleaseLease deletes the lease if owner still holds it.
func (d *Dynamo) ReleaseLease(ctx context.Context, name, owner string) error {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	_, err := d.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 &d.table,
		Key:                       key(leaseKey(name)),
		ConditionExpression:       aws.String("#owner = :owner"),
		ExpressionAttributeNames:  map[string]string{"#owner": "owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":owner": str(owner)},
	})
	var failed *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &failed) {
		return fmt.Errorf("release lease %s: %w", name, err)
	}
	return nil
}
