package ragcore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// ServiceActorID names this service to RAGcore for calls no user made (the schedule).
const ServiceActorID = "service:mobilityops-knowledge"

// ScoreSemantics is the score meaning the contract fixes for /v1/retrieve.
const ScoreSemantics = "cosine_similarity"

// ProviderOptions tune the provider.
type ProviderOptions struct {
	// SourcePrefix is the source_id prefix (default config.DefaultRAGcoreSourcePrefix).
	SourcePrefix string
	// UploadConcurrency bounds parallel uploads of a manifest sync (default 8).
	UploadConcurrency int
	// Log receives one line per response from which the allow-list dropped something.
	Log *slog.Logger
}

// Provider is RAGcoreKnowledgeProvider: health, L1 retrieval, grounded answers and manifest sync
// through RAGcore, with every result filtered through the allow-list of managed sources.
type Provider struct {
	c       *Client
	allow   *AllowList
	uploads int
	log     *slog.Logger
}

var (
	_ port.Retriever      = (*Provider)(nil)
	_ port.Answerer       = (*Provider)(nil)
	_ port.ManifestSyncer = (*Provider)(nil)
	_ port.HealthChecker  = (*Provider)(nil)
)

// NewProvider returns the RAGcore provider for a corpus.
func NewProvider(c *Client, corpus *knowledge.Corpus, o ProviderOptions) *Provider {
	o.SourcePrefix = cmp.Or(o.SourcePrefix, config.DefaultRAGcoreSourcePrefix)
	if o.UploadConcurrency <= 0 {
		o.UploadConcurrency = 8
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Provider{c: c, allow: NewAllowList(o.SourcePrefix, corpus), uploads: o.UploadConcurrency, log: o.Log}
}

// Client is the provider's RAGcore client.
func (p *Provider) Client() *Client { return p.c }

var _ port.BreakerReporter = (*Provider)(nil)

// BreakerOpen reports whether the circuit breaker around RAGcore refuses calls (open or
// half-open): GET /health reports the provider "circuit_open" then.
func (p *Provider) BreakerOpen() bool { return p.c.BreakerOpen() }

// Name implements port.Named.
func (p *Provider) Name() string { return "ragcore" }

// Semantic implements port.Retriever: RAGcore retrieval is embedding search.
func (p *Provider) Semantic() bool { return true }

// ScoreKind implements port.Retriever.
func (p *Provider) ScoreKind() string { return ScoreSemantics }

// Health implements port.HealthChecker.
func (p *Provider) Health(ctx context.Context, call port.Call) port.Health {
	r, err := p.c.Health(ctx, actorOf(call.Actor, call.CorrelationID))
	if err != nil {
		return port.Health{Status: domain.HealthUnavailable, Detail: "RAGcore could not be reached (" + classOf(err) + ")"}
	}
	return port.Health{Status: r.Status, Detail: "RAGcore reports " + string(r.Status)}
}

// Retrieve implements port.Retriever through POST /v1/retrieve. Candidates of
// sources that are not managed for the question's language are dropped here.
func (p *Provider) Retrieve(ctx context.Context, q port.Query) ([]port.Candidate, error) {
	req := RetrieveRequest{Collection: p.c.ns.Collection, Query: q.Question, Language: q.Language, TopK: q.TopK}
	if q.Category != "" {
		req.Filters = &Filters{Category: q.Category}
	}
	r, err := p.c.Retrieve(ctx, actorOf(q.Actor, q.CorrelationID), req)
	if err != nil {
		return nil, err
	}
	if r.ScoreSemantics != ScoreSemantics {
		// A score of another meaning would be fused as if it were a cosine similarity.
		return nil, &Error{Op: "retrieve", Class: ClassBadResponse,
			err: fmt.Errorf("score_semantics %q, the contract says %q", r.ScoreSemantics, ScoreSemantics)}
	}
	return managed(ctx, p, "retrieve", q.Language, q.CorrelationID, r.Candidates,
		func(c RetrievedItem) (string, string) { return c.SourceID, c.ExternalID },
		func(c RetrievedItem, d *knowledge.Document, kept int) port.Candidate {
			anchor := knowledge.Anchor(c.Section)
			cand := port.Candidate{
				DocumentID: d.ID, Version: c.Version, Title: cmp.Or(c.Title, d.Title), Section: c.Section,
				Anchor: anchor, Category: cmp.Or(c.Category, d.Category), Source: knowledge.SectionSource(d.Path, anchor),
				Content: c.Content, Score: *c.Score, Rank: kept + 1,
			}
			if c.Version == d.Version {
				// The effective date belongs to a version: only the local copy's own version has it.
				cand.EffectiveDate = d.EffectiveDate
			}
			return cand
		}), nil
}

// unmanagedAnswer replaces an answer that cites nothing the service manages: it is never passed
// on. It is in the language of the question.
func unmanagedAnswer(lang string) string {
	if lang == "de" {
		return "Die Antwort von RAGcore nennt kein verwaltetes Verfahren und wird daher nicht weitergegeben. " +
			"Es wird kein Verfahren abgeleitet; lookup liefert die nächstliegenden Verfahrensabschnitte."
	}
	return "RAGcore's answer cites no managed procedure, so it is not passed on. " +
		"No procedure is inferred; use lookup for the closest procedure passages."
}

// insufficientAnswer replaces RAGcore's own wording when it reports insufficient evidence, so that
// no generated text reaches the caller without managed citations behind it. It is in the language
// of the question.
func insufficientAnswer(lang string) string {
	if lang == "de" {
		return "Die Verfahren decken diese Frage nicht eindeutig ab; es wird kein Verfahren abgeleitet. " +
			"Die nächstliegenden verwalteten Quellen, die RAGcore genannt hat, sind aufgeführt."
	}
	return "The procedures do not clearly cover this question; no procedure is inferred. " +
		"The closest managed sources RAGcore cited, if any, are listed."
}

// Ask implements port.Answerer through POST /v1/answer. Citations of unmanaged
// sources are dropped; an answer left with no managed citation is insufficient.
func (p *Provider) Ask(ctx context.Context, q port.AskQuery) (port.GroundedAnswer, error) {
	req := AnswerRequest{Collection: p.c.ns.Collection, Question: q.Question, Language: q.Language}
	if q.Category != "" {
		req.Filters = &Filters{Category: q.Category}
	}
	r, err := p.c.Answer(ctx, actorOf(q.Actor, q.CorrelationID), req)
	if err != nil {
		return port.GroundedAnswer{}, err
	}
	sources := managed(ctx, p, "answer", q.Language, q.CorrelationID, r.Citations,
		func(c Citation) (string, string) { return c.SourceID, c.ExternalID },
		func(c Citation, d *knowledge.Document, _ int) port.AnswerSource {
			return port.AnswerSource{DocumentID: d.ID, Title: cmp.Or(c.Title, d.Title),
				Version: cmp.Or(c.Version, d.Version), Section: c.Section, Excerpt: c.Excerpt}
		})
	switch {
	case len(sources) == 0 && r.EvidenceState == port.StateGrounded:
		return port.GroundedAnswer{Answer: unmanagedAnswer(q.Language), EvidenceState: port.StateInsufficient,
			Sources: sources}, nil
	case r.EvidenceState != port.StateGrounded:
		return port.GroundedAnswer{Answer: insufficientAnswer(q.Language), EvidenceState: port.StateInsufficient,
			Sources: sources}, nil
	}
	return port.GroundedAnswer{Answer: r.Answer, EvidenceState: port.StateGrounded, Sources: sources,
		Generated: true}, nil
}

// SyncManifest implements port.ManifestSyncer: every document is uploaded, at most
// UploadConcurrency at a time; RAGcore answers "unchanged" for a version it already published.
// One failed upload never stops the others; it is reported by document with its error class.
// When RAGcore could not be reached for any document at all (every upload refused, unresolvable,
// 503 to the end, or refused by the open breaker), the sync did not happen: the error is
// port.ErrUnavailable, which the API answers with 503.
func (p *Provider) SyncManifest(ctx context.Context, call port.Call, docs []port.DocumentRef) (port.SyncResult, error) {
	a := actorOf(call.Actor, call.CorrelationID)
	res := port.SyncResult{Documents: len(docs), Failed: []domain.SyncFailure{}}
	// unreachable is the cause reported when no upload reached RAGcore: a real failure
	// (refused, 503) rather than the breaker's refusals it led to, whatever order they ended in.
	var unreachable error
	unreachableCount := 0
	var mu sync.Mutex
	var g errgroup.Group
	g.SetLimit(p.uploads)
	for _, d := range docs {
		g.Go(func() error {
			r, err := p.c.Upload(ctx, a, p.allow.SourceID(d.Language), d.DocumentID, UploadRequest{
				Collection: p.c.ns.Collection, Content: string(d.Content), ContentType: "text/markdown",
				Metadata: UploadMetadata{Title: d.Title, Version: d.Version, EffectiveDate: d.EffectiveDate,
					Language: d.Language, Category: d.Category},
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				res.Failed = append(res.Failed, domain.SyncFailure{DocumentID: d.DocumentID, Reason: reasonOf(err)})
				if errors.Is(err, port.ErrUnavailable) {
					if unreachable == nil || classOf(unreachable) == ClassCircuitOpen && classOf(err) != ClassCircuitOpen {
						unreachable = err
					}
					unreachableCount++
				}
			case r.Status == "unchanged":
				res.Unchanged++
			default:
				res.Uploaded++
				res.UploadedIDs = append(res.UploadedIDs, d.DocumentID)
			}
			return nil
		})
	}
	_ = g.Wait() // the functions never return an error: failures are per document
	slices.Sort(res.UploadedIDs)
	if len(docs) > 0 && unreachableCount == len(docs) {
		return port.SyncResult{}, fmt.Errorf("no document could be uploaded: %w", unreachable)
	}
	res.Note = fmt.Sprintf("%d new version(s) uploaded to RAGcore (searchable once RAGcore has processed them), "+
		"%d unchanged, %d failed", res.Uploaded, res.Unchanged, len(res.Failed))
	return res, nil
}

var _ port.Verifier = (*Provider)(nil)

// managed is the allow-list applied to a RAGcore answer: the items whose source the service
// manages, each mapped with its document by keep (kept counts the items kept before it), and
// the others dropped and logged under op. The result is never nil.
func managed[T, R any](ctx context.Context, p *Provider, op, lang, correlationID string, items []T,
	ids func(T) (sourceID, externalID string), keep func(item T, d *knowledge.Document, kept int) R) []R {
	out := make([]R, 0, len(items))
	var dropped []string
	for _, it := range items {
		sourceID, externalID := ids(it)
		d, ok := p.allow.Managed(lang, sourceID, externalID)
		if !ok {
			dropped = append(dropped, sourceID+"/"+externalID)
			continue
		}
		out = append(out, keep(it, d, len(out)))
	}
	p.logDropped(ctx, op, correlationID, dropped)
	return out
}

// VerifySource implements port.Verifier with one exact identity lookup, judged by Verdict.
func (p *Provider) VerifySource(ctx context.Context, call port.Call, lang, documentID string) (string, error) {
	sourceID := p.allow.SourceID(lang)
	r, err := p.c.Documents(ctx, actorOf(call.Actor, call.CorrelationID), sourceID, documentID)
	if err != nil {
		return "", err
	}
	return Verdict(r.Documents, p.c.ns, sourceID, documentID), nil
}

var _ port.VersionVerifier = (*Provider)(nil)

// VerifySourceVersion implements port.VersionVerifier: VerifySource, and the active version of
// the source when it counts as indexed.
func (p *Provider) VerifySourceVersion(ctx context.Context, call port.Call, lang, documentID string) (string, string, error) {
	sourceID := p.allow.SourceID(lang)
	r, err := p.c.Documents(ctx, actorOf(call.Actor, call.CorrelationID), sourceID, documentID)
	if err != nil {
		return "", "", err
	}
	outcome := Verdict(r.Documents, p.c.ns, sourceID, documentID)
	if outcome != Indexed && outcome != NotPublished {
		return outcome, "", nil
	}
	return outcome, ActiveVersion(r.Documents, p.c.ns, sourceID, documentID), nil
}

func (p *Provider) logDropped(ctx context.Context, op, correlationID string, dropped []string) {
	if len(dropped) == 0 {
		return
	}
	p.log.WarnContext(ctx, "RAGcore returned unmanaged sources; dropped by the allow-list",
		"operation", op, "correlation_id", correlationID, "dropped", len(dropped), "sources", dropped[:min(len(dropped), 10)])
}

func actorOf(a port.Actor, correlationID string) Actor {
	if a.ID == "" {
		return Actor{ID: ServiceActorID, Scopes: []string{"knowledge:read"}, CorrelationID: correlationID}
	}
	return Actor{ID: a.ID, Scopes: a.Scopes, CorrelationID: correlationID}
}

// classOf is the class of a RAGcore error, "error" for anything else.
func classOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return "error"
}

// reasonOf says why an upload failed, in words safe for a response: the class and the status.
func reasonOf(err error) string {
	var e *Error
	if !errors.As(err, &e) {
		return "error"
	}
	if e.Status != 0 {
		return fmt.Sprintf("%s (HTTP %d)", e.Class, e.Status)
	}
	return e.Class
}
