package store

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
)

// The keys of the table's records (see Dynamo), all built here. <namespace> is
// tenant#workspace#collection.
const (
	attrPK      = "pk"
	attrSK      = "sk"
	attrExpires = "expires_at"
	attrStored  = "stored_at"
)

// nsKey is the namespace's part of a record key.
func nsKey(n domain.Namespace) string { return n.Tenant + "#" + n.Workspace + "#" + n.Collection }

// traceKey is INV#<invocation_id>, TRACE: the keys lookup.TraceItem writes into the item.
func traceKey(id string) (pk, sk string) {
	return lookup.TracePartitionKey(id), lookup.TraceSortKey
}

// verificationKey is VERIFY#<namespace>, LANG#<language>.
func verificationKey(ns domain.Namespace, lang string) (pk, sk string) {
	return "VERIFY#" + nsKey(ns), "LANG#" + lang
}

// syncPK is SYNC#<namespace>, the partition of a namespace's sync reports.
func syncPK(ns domain.Namespace) string { return "SYNC#" + nsKey(ns) }

// runPrefix begins the sort key of every stored report: RUN#<run_id>#<language>.
const runPrefix = "RUN#"

func runSK(runID, lang string) string { return runPrefix + runID + "#" + lang }

// latestSK is LATEST#<language>, the newest report of a language.
func latestSK(lang string) string { return "LATEST#" + lang }

// leaseKey is LEASE#<name>, LEASE.
func leaseKey(name string) (pk, sk string) { return "LEASE#" + name, "LEASE" }

// probeKey is an item that is never written: GET /health reads it.
func probeKey() (pk, sk string) { return "HEALTH", "PROBE" }

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: &types.AttributeValueMemberS{Value: pk}, attrSK: &types.AttributeValueMemberS{Value: sk}}
}
