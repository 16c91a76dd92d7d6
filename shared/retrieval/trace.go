package retrieval

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"
	"unsafe"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/span"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// Invocation returns a stored trace to its own actor, or to an actor with knowledge:admin.
// Anyone else gets ErrNotFound, so that ids of other actors' calls cannot be probed.
func (s *Service) Invocation(ctx context.Context, id string, actor port.Actor) (lookup.Trace, error) {
	t, err := s.traces.GetTrace(ctx, id)
	if err != nil {
		return lookup.Trace{}, err
	}
	if t.ActorID != actor.ID && !actor.HasScope("knowledge:admin") {
		return lookup.Trace{}, domain.ErrNotFound
	}
	return t, nil
}

// record completes and stores a trace. A failed write never fails the caller's request and never
// loses the trace: the trace is written whole to the log as one line whose key "trace" holds the
// table item the write would have made (TraceItem), to be replayed into the table by
// cmd/trace-replay, and the failure is counted. The write outlives a caller that hung up (the
// store's own deadline bounds it), so that every answered call leaves its trace. A store may
// hold the call for less than its deadline and report a write still running, or one it refused
// at once (store.Guarded, while its circuit breaker is open), as an error: the trace is then
// logged here all the same, and a write that lands later leaves it in the table too.
func (s *Service) record(ctx context.Context, t lookup.Trace, question, correlationID string) {
	// The span opens before the cancellation is cut: a value lookup through a WithoutCancel
	// context boxes it, one allocation per lookup.
	ctx, end := span.Start(ctx, "trace_write")
	if ctx.Done() != nil { // a context that is never cancelled has nothing to cut
		ctx = context.WithoutCancel(ctx)
	}
	// The question's bytes are hashed where they are: a conversion would copy them, one of a
	// lookup's allocations (the hash only reads them).
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(question), len(question)))
	var digest [2 * sha256.Size]byte // one allocation, the string, where hex.EncodeToString makes two
	hex.Encode(digest[:], sum[:])
	t.QuestionSHA256 = string(digest[:])
	t.QuestionChars = utf8.RuneCountInString(question)
	t.CreatedAt = s.now().UTC()
	t.ExpiresAt = t.CreatedAt.Add(cmp.Or(s.opts.TraceRetention, config.DefaultTraceRetention))
	s.emitEvidence(t)
	err := s.traces.PutTrace(ctx, t)
	end()
	if err == nil {
		return
	}
	n := s.traceFailures.Add(1)
	if s.opts.Metrics != nil {
		s.opts.Metrics.Count("TraceWriteFailures", 1)
	}
	item, ierr := lookup.TraceItem(t)
	if ierr != nil { // no invocation id: nothing a replay could store
		s.log.ErrorContext(ctx, "trace write failed; the trace cannot be logged for replay",
			"correlation_id", correlationID, "trace_failures", n, "error", port.SafeError(err), "encode_error", ierr.Error())
		return
	}
	s.log.ErrorContext(ctx, "trace write failed; the trace is in this line for replay, the response is unaffected",
		"correlation_id", correlationID, "invocation_id", t.InvocationID, "trace_failures", n,
		"error", port.SafeError(err), "trace", item)
}

// summaries are the blocks as a trace records them: identity, layer, score, reasons, a clipped
// preview of the content and the fusion basis (ranks[i]'s; none for a block past ranks, an
// outdated one).
func summaries(blocks []lookup.EvidenceBlock, ranks []ranked) []lookup.BlockSummary {
	out := make([]lookup.BlockSummary, 0, len(blocks))
	// The summaries' own copies of every block's score and fusion basis, in one allocation.
	type basis struct {
		score  port.Score
		fusion lookup.FusionBasis
	}
	bases := make([]basis, len(blocks))
	for i := range blocks {
		b := &blocks[i]
		bases[i].score = b.Score
		var preview string
		if i < len(ranks) {
			bases[i].fusion = ranks[i].fusion
			if r := &ranks[i]; r.previewOf == b.Content {
				preview = r.preview
			}
		}
		if preview == "" {
			preview = textproc.Clip(b.Content, lookup.SummaryChars)
		}
		out = append(out, lookup.BlockSummary{Source: b.Source, Title: b.Title, RetrievalLayer: b.RetrievalLayer,
			DocumentID: b.DocumentID, Version: b.Version, Outdated: b.Outdated, Score: &bases[i].score,
			HitReasons: b.HitReasons, Content: preview, Fusion: &bases[i].fusion})
	}
	return out
}

// newID is a fresh invocation id: random, URL-safe, 26 base32 characters (at least 128 bits).
func newID() string { return rand.Text() }
