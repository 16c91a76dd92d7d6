package store

import (
	"math/big"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
)

// The table's items other than traces (a trace's item is lookup.TraceItem, the encoding the
// log fallback shares), each encoded by attributevalue through its dynamodbav tags only. They
// are the store's own: the records the store's callers see carry no encoding.

// verificationItem is a cached verification: VERIFY#<namespace>, LANG#<language>.
type verificationItem struct {
	PK                string         `dynamodbav:"pk"`
	SK                string         `dynamodbav:"sk"`
	Checked           int            `dynamodbav:"checked"`
	Confirmed         int            `dynamodbav:"confirmed"`
	Missing           []string       `dynamodbav:"missing"`
	Errors            int            `dynamodbav:"errors"`
	VerifiedAt        time.Time      `dynamodbav:"verified_at"`
	Complete          bool           `dynamodbav:"complete"`
	NotIndexed        []outcomeItem  `dynamodbav:"not_indexed"`
	Failed            []outcomeItem  `dynamodbav:"failed"`
	DurationMs        float64        `dynamodbav:"duration_ms"`
	Outdated          []outdatedItem `dynamodbav:"outdated"`
	CorpusFingerprint string         `dynamodbav:"corpus_fingerprint"`
	// StoredAt (RFC 3339 with nanoseconds) is what reads compare with the clock; ExpiresAt is
	// the TTL attribute (epoch seconds), which only cleans up.
	StoredAt  string `dynamodbav:"stored_at"`
	ExpiresAt int64  `dynamodbav:"expires_at"`
}

type outdatedItem struct {
	DocumentID string `dynamodbav:"document_id"`
	InForce    string `dynamodbav:"in_force"`
	Active     string `dynamodbav:"active"`
	Uploaded   string `dynamodbav:"uploaded,omitempty"`
}

type outcomeItem struct {
	DocumentID string `dynamodbav:"document_id"`
	Reason     string `dynamodbav:"reason"`
}

func newVerificationItem(ns domain.Namespace, lang string, v Verification, stored time.Time) verificationItem {
	pk, sk := verificationKey(ns, lang)
	return verificationItem{PK: pk, SK: sk, Checked: v.Checked, Confirmed: v.Confirmed, Missing: v.Missing,
		Errors: v.Errors, VerifiedAt: v.VerifiedAt, Complete: v.Complete, NotIndexed: outcomeItems(v.NotIndexed),
		Failed: outcomeItems(v.Failed), DurationMs: v.DurationMs, CorpusFingerprint: v.CorpusFingerprint,
		Outdated: outdatedItems(v.Outdated),
		StoredAt: stored.Format(time.RFC3339Nano), ExpiresAt: epochCeil(stored.Add(VerificationTTL))}
}

func (it verificationItem) verification() Verification {
	return Verification{VerificationResult: domain.VerificationResult{Checked: it.Checked, Confirmed: it.Confirmed,
		Missing: it.Missing, Errors: it.Errors, VerifiedAt: it.VerifiedAt, Complete: it.Complete,
		NotIndexed: outcomes(it.NotIndexed), Failed: outcomes(it.Failed), DurationMs: it.DurationMs,
		Outdated: outdatedSources(it.Outdated)},
		CorpusFingerprint: it.CorpusFingerprint}
}

// outdatedItems and outdatedSources keep nil as nil, as outcomeItems does.
func outdatedItems(in []domain.OutdatedSource) []outdatedItem {
	if in == nil {
		return nil
	}
	out := make([]outdatedItem, len(in))
	for i, o := range in {
		out[i] = outdatedItem(o)
	}
	return out
}

func outdatedSources(in []outdatedItem) []domain.OutdatedSource {
	if in == nil {
		return nil
	}
	out := make([]domain.OutdatedSource, len(in))
	for i, o := range in {
		out[i] = domain.OutdatedSource(o)
	}
	return out
}

// outcomeItems and outcomes keep nil as nil, so that the item is as it was written.
func outcomeItems(in []domain.SourceOutcome) []outcomeItem {
	if in == nil {
		return nil
	}
	out := make([]outcomeItem, len(in))
	for i, o := range in {
		out[i] = outcomeItem(o)
	}
	return out
}

func outcomes(in []outcomeItem) []domain.SourceOutcome {
	if in == nil {
		return nil
	}
	out := make([]domain.SourceOutcome, len(in))
	for i, o := range in {
		out[i] = domain.SourceOutcome(o)
	}
	return out
}

// reportItem is a sync report: SYNC#<namespace>, RUN#<run_id>#<language> as stored once, and
// SYNC#<namespace>, LATEST#<language> as the newest of its language, which also carries
// FinishedAtNs (finishedOrder) for the condition that decides which report is newer.
type reportItem struct {
	PK           string                `dynamodbav:"pk"`
	SK           string                `dynamodbav:"sk"`
	RunID        string                `dynamodbav:"run_id"`
	Language     string                `dynamodbav:"language"`
	Synced       int                   `dynamodbav:"synced_document_count"`
	Failed       int                   `dynamodbav:"failed_document_count"`
	FinishedAt   time.Time             `dynamodbav:"finished_at"`
	FinishedAtNs attributevalue.Number `dynamodbav:"finished_at_ns,omitempty"`
	ReceivedAt   time.Time             `dynamodbav:"received_at"`
}

// finishedOrder is the number DynamoDB compares to order reports by finished_at: the exact
// nanoseconds since 1970-01-01T00:00:00Z as a decimal integer, negative before it. It is exact
// for every time a time.Time holds (RFC 3339's years 0000 to 9999 need 21 digits; a DynamoDB
// number holds 38), where int64 nanoseconds (time.UnixNano) overflow before 1678 and after 2262
// and ordered a report of 1600 after every other. Within those years it is the int64 count
// itself, so that items holding the int64 count compare the same.
func finishedOrder(t time.Time) attributevalue.Number {
	n := new(big.Int).Mul(big.NewInt(t.Unix()), big.NewInt(1e9))
	n.Add(n, big.NewInt(int64(t.Nanosecond())))
	return attributevalue.Number(n.String())
}

// ordered reports whether the item's FinishedAtNs is the order of its own finished_at: false
// for an item without it, and for one written with an overflowed int64 (see finishedOrder).
func (it reportItem) ordered() bool {
	got, ok := new(big.Int).SetString(string(it.FinishedAtNs), 10)
	return ok && got.String() == string(finishedOrder(it.FinishedAt))
}

func newReportItem(pk, sk string, r domain.SyncReport) reportItem {
	return reportItem{PK: pk, SK: sk, RunID: r.RunID, Language: r.Language, Synced: r.Synced, Failed: r.Failed,
		FinishedAt: r.FinishedAt, ReceivedAt: r.ReceivedAt}
}

func (it reportItem) report() domain.SyncReport {
	return domain.SyncReport{RunID: it.RunID, Language: it.Language, Synced: it.Synced, Failed: it.Failed,
		FinishedAt: it.FinishedAt, ReceivedAt: it.ReceivedAt}
}

// leaseItem is a lease: LEASE#<name>, LEASE. ExpiresAtMs decides; ExpiresAt, the TTL attribute,
// only cleans up a minute later.
type leaseItem struct {
	PK          string `dynamodbav:"pk"`
	SK          string `dynamodbav:"sk"`
	Owner       string `dynamodbav:"owner"`
	ExpiresAtMs int64  `dynamodbav:"expires_at_ms"`
	ExpiresAt   int64  `dynamodbav:"expires_at"`
}
