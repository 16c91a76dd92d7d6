package retrieval

import (
	"context"
	"errors"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// AskRequest is a validated ask.
type AskRequest struct {
	Question      string
	Language      string
	Actor         Actor
	CorrelationID string
}

// unavailableAnswer is what an ask says when the provider cannot answer: plainly, and with no
// procedure made up in its place.
const unavailableAnswer = "The knowledge provider is unavailable, so no answer can be given now. " +
	"No procedure has been inferred. Keyword evidence is still available through lookup."

// Ask asks the provider for a grounded answer, with the L0 domain as its filter when unambiguous,
// and records the trace. A provider failure gives an "unavailable" answer, not an error.
func (s *Service) Ask(ctx context.Context, req AskRequest) (Answer, error) {
	l := s.ix.Lang(req.Language)
	if l == nil {
		return Answer{}, ErrUnsupportedLanguage
	}
	start := s.now()
	text := textproc.Normalize(req.Question) // analysed and sent normalised; the trace hashes req.Question
	hints, matches := l0(l, uniqueTerms(l.Analyzer.QuestionTerms(text)))
	l0Done := s.now()
	l1 := L1Details{Status: L1OK, Provider: s.provider.Name(), ScoreKind: s.provider.ScoreKind()}
	q := AskQuery{Question: text, Language: req.Language, Actor: req.Actor, CorrelationID: req.CorrelationID}
	if len(hints.Domains) == 1 {
		l1.CategoryFilter = &hints.Domains[0]
		q.Category = hints.Domains[0]
	}
	ans := Answer{Provider: s.provider.Name(), Sources: []AnswerSource{}}
	pctx, cancel := s.providerContext(ctx)
	ga, err := s.provider.Ask(pctx, q)
	cancel()
	switch {
	case err != nil:
		l1.Status = L1Failed
		if errors.Is(err, ErrUnavailable) {
			l1.Status = L1Unavailable
		}
		l1.ErrorClass = ErrorClass(err)
		s.log.WarnContext(ctx, "ask failed", "correlation_id", req.CorrelationID,
			"provider", s.provider.Name(), "error_class", l1.ErrorClass, "error", SafeError(err))
		ans.Answer, ans.EvidenceState, ans.AnswerKind = unavailableAnswer, StateUnavailable, "none"
	default:
		ans.Answer, ans.EvidenceState = ga.Answer, ga.EvidenceState
		if ga.Sources != nil {
			ans.Sources = ga.Sources
		}
		ans.AnswerKind = "template"
		if ga.Generated {
			ans.AnswerKind = "generated"
		}
		if len(ans.Sources) == 0 {
			l1.Status = L1Empty
		}
	}
	l1.CandidateCount = len(ans.Sources)
	l1Done := s.now()

	sums := make([]BlockSummary, 0, len(ans.Sources))
	for _, src := range ans.Sources {
		sums = append(sums, BlockSummary{
			Source: "procedures/" + req.Language + "/" + src.DocumentID + ".md#" + knowledge.Anchor(src.Section),
			Title:  src.Title, RetrievalLayer: LayerL1, HitReasons: []string{"l1:answer"},
			Content: Clip(src.Excerpt, SummaryChars),
		})
	}
	ans.InvocationID = newID()
	s.emit(ToolAsk, layerOf(len(matches) > 0, len(ans.Sources) > 0), l1.Status, s.now().Sub(start))
	s.record(ctx, Trace{
		InvocationID: ans.InvocationID, Tool: ToolAsk, ActorID: req.Actor.ID, Language: req.Language,
		RetrievalDetails: TraceDetails{
			Layer: layerOf(len(matches) > 0, len(ans.Sources) > 0), EvidenceState: ans.EvidenceState,
			L0: hints, L1: l1, CandidateCount: len(ans.Sources), FinalBlockCount: len(ans.Sources),
			EvidenceSummaries: sums, Sidecar: s.askSidecarStatus(),
			LatencyMs: Latency{L0: ms(l0Done.Sub(start)), L1: ms(l1Done.Sub(l0Done)), Total: ms(s.now().Sub(start))},
		},
	}, req.Question, req.CorrelationID)
	return ans, nil
}

// askSidecarStatus is the sidecar's part in an ask: it compares lookups only.
func (s *Service) askSidecarStatus() SidecarStatus {
	if s.opts.Sidecar == nil {
		return SidecarStatus{Status: "disabled"}
	}
	return SidecarStatus{Enabled: true, Status: "skipped"}
}
