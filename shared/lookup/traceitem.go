package lookup

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// The stored form of a trace, attribute by attribute. The DynamoDB store writes exactly this
// record as the table item, and a trace that cannot be stored is logged as this record under the
// key "trace" (see record), so that the log line replays into the very item the write would have
// made. Both go through TraceItem; neither encodes a trace on its own.
const (
	// TraceKeyAttr and TraceSortAttr are the table's key attributes.
	TraceKeyAttr  = "pk"
	TraceSortAttr = "sk"
	// TraceTTLAttr is the TTL attribute: the expiry in epoch seconds, rounded up. It replaces
	// the trace's own expires_at (a time) in the item.
	TraceTTLAttr = "expires_at"
	// TraceExpiryAttr is the exact expiry (RFC 3339 with nanoseconds), the one reads compare
	// with the clock: DynamoDB deletes expired items late.
	TraceExpiryAttr = "expires_at_time"
	// TraceSortKey is the sort key of every trace item.
	TraceSortKey = "TRACE"
)

// ErrInvalidTrace is returned for a trace or trace item that cannot be stored or read as one.
var ErrInvalidTrace = errors.New("invalid trace")

// TracePartitionKey is the partition key of a trace's item.
func TracePartitionKey(invocationID string) string { return "INV#" + invocationID }

// TraceItem encodes a trace as its table item: the trace's JSON fields, the table key, the TTL
// attribute and the exact expiry. Values have JSON types (string, float64, int64, bool, nil,
// []any, map[string]any), so that the item marshals the same into DynamoDB attributes and into a
// JSON log line.
func TraceItem(t Trace) (map[string]any, error) {
	if t.InvocationID == "" {
		return nil, fmt.Errorf("%w: no invocation_id", ErrInvalidTrace)
	}
	b, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("encode trace %s: %w", t.InvocationID, err)
	}
	var item map[string]any
	if err := json.Unmarshal(b, &item); err != nil {
		return nil, fmt.Errorf("encode trace %s: %w", t.InvocationID, err)
	}
	item[TraceKeyAttr] = TracePartitionKey(t.InvocationID)
	item[TraceSortAttr] = TraceSortKey
	item[TraceTTLAttr] = epochCeil(t.ExpiresAt)
	item[TraceExpiryAttr] = t.ExpiresAt.UTC().Format(time.RFC3339Nano)
	return item, nil
}

// TraceFromItem decodes a trace item, read from the table or from a log line, into the trace.
// The key must be the trace's own and the exact expiry must be there; lists an item holds as
// absent or null read back as empty lists, as they were written.
func TraceFromItem(item map[string]any) (Trace, error) {
	id, _ := item["invocation_id"].(string)
	if id == "" {
		return Trace{}, fmt.Errorf("%w: no invocation_id", ErrInvalidTrace)
	}
	if pk, _ := item[TraceKeyAttr].(string); pk != TracePartitionKey(id) {
		return Trace{}, fmt.Errorf("%w: %s %q is not the key of %s", ErrInvalidTrace, TraceKeyAttr, pk, id)
	}
	if sk, _ := item[TraceSortAttr].(string); sk != TraceSortKey {
		return Trace{}, fmt.Errorf("%w: %s %q", ErrInvalidTrace, TraceSortAttr, sk)
	}
	expText, _ := item[TraceExpiryAttr].(string)
	exp, err := time.Parse(time.RFC3339Nano, expText)
	if err != nil {
		return Trace{}, fmt.Errorf("%w: %s of %s", ErrInvalidTrace, TraceExpiryAttr, id)
	}
	fields := make(map[string]any, len(item))
	for k, v := range item {
		switch k {
		case TraceKeyAttr, TraceSortAttr, TraceTTLAttr, TraceExpiryAttr:
		default:
			fields[k] = v
		}
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return Trace{}, fmt.Errorf("%w: %s: %v", ErrInvalidTrace, id, err)
	}
	var t Trace
	if err := json.Unmarshal(b, &t); err != nil {
		return Trace{}, fmt.Errorf("%w: %s: %v", ErrInvalidTrace, id, err)
	}
	t.ExpiresAt = exp
	normaliseTrace(&t)
	return t, nil
}

// normaliseTrace turns lists that a store returns as absent or null into empty lists, so that a
// trace reads back as it was written.
func normaliseTrace(t *Trace) {
	d := &t.RetrievalDetails
	for _, l := range []*[]string{&d.L0.MatchedTitles, &d.L0.MatchedKeywords, &d.L0.Domains, &d.L0.Entities} {
		if *l == nil {
			*l = []string{}
		}
	}
	if d.EvidenceSummaries == nil {
		d.EvidenceSummaries = []BlockSummary{}
	}
	for i := range d.EvidenceSummaries {
		if d.EvidenceSummaries[i].HitReasons == nil {
			d.EvidenceSummaries[i].HitReasons = []string{}
		}
	}
}

// epochCeil is t in whole seconds, rounded up, for the TTL attribute.
func epochCeil(t time.Time) int64 { return int64(math.Ceil(float64(t.UnixNano()) / 1e9)) }
