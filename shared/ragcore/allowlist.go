package ragcore

import (
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// AllowList is the set of managed sources: source_id "<prefix>-<language>" with an external_id
// among the corpus's procedure ids of that language. Every RAGcore result (candidate, citation,
// document) passes through it before anything else sees it.
type AllowList struct {
	prefix string
	corpus *knowledge.Corpus
}

// NewAllowList returns the allow-list of the corpus under a source-id prefix.
func NewAllowList(prefix string, corpus *knowledge.Corpus) *AllowList {
	return &AllowList{prefix: prefix, corpus: corpus}
}

// SourceID is the source_id of a language's procedures.
func (a *AllowList) SourceID(lang string) string { return a.prefix + "-" + lang }

// Managed returns the procedure a RAGcore result names when it is a managed source of lang:
// one with a version on file, whichever is in force (the service tells an outdated version
// from the one in force on the day asked). The document returned is the procedure's <id>.md
// file, else its newest version.
func (a *AllowList) Managed(lang, sourceID, externalID string) (*knowledge.Document, bool) {
	if sourceID != a.SourceID(lang) {
		return nil, false
	}
	if d := a.corpus.Document(lang, externalID); d != nil {
		return d, true
	}
	vs := a.corpus.Versions(lang, externalID)
	if len(vs) == 0 {
		return nil, false
	}
	return vs[len(vs)-1], true
}

// Verification outcomes of one managed source (see Indexed).
const (
	Indexed        = port.SourceIndexed
	NotFound       = "missing"         // no document with that identity
	NotActive      = "not_active"      // archived or deleted
	NotPublished   = "not_published"   // no active version, or one still processing or failed
	Duplicated     = "duplicated"      // more than one active document in the namespace
	OtherNamespace = "other_namespace" // active only in another tenant, workspace or collection
)

// Verdict applies the RAGcore contract's (docs/ragcore.md) rule to the documents of one identity lookup: the source counts
// as indexed only when exactly one returned document is active, in the configured tenant,
// workspace and collection, with a published active version. content_sha256 is deliberately not
// compared: it hashes RAGcore's parsed artifact, not the uploaded bytes.
func Verdict(docs []Document, ns domain.Namespace, sourceID, externalID string) string {
	if len(docs) == 0 {
		return NotFound
	}
	var inSpace, active, elsewhere int
	var published bool
	for _, d := range docs {
		if d.SourceID != sourceID || d.ExternalID != externalID {
			continue // not the identity asked for: never counts
		}
		if d.Tenant != ns.Tenant || d.Workspace != ns.Workspace || d.Collection != ns.Collection {
			if d.Status == "active" {
				elsewhere++
			}
			continue
		}
		inSpace++
		if d.Status != "active" {
			continue
		}
		active++
		published = d.ActiveVersion != nil && d.ActiveVersion.Status == "published"
	}
	switch {
	case active > 1:
		return Duplicated
	case active == 1 && published:
		return Indexed
	case active == 1:
		return NotPublished
	case inSpace > 0:
		return NotActive
	case elsewhere > 0:
		return OtherNamespace
	}
	return NotFound
}

// ActiveVersion is the version of the one active document in the namespace that Verdict counts
// as indexed; "" when there is none.
func ActiveVersion(docs []Document, ns domain.Namespace, sourceID, externalID string) string {
	for _, d := range docs {
		if d.SourceID == sourceID && d.ExternalID == externalID && d.Status == "active" && d.ActiveVersion != nil &&
			d.Tenant == ns.Tenant && d.Workspace == ns.Workspace && d.Collection == ns.Collection {
			return d.ActiveVersion.Version
		}
	}
	return ""
}
