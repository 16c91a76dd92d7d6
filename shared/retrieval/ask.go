package retrieval

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lexical"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/span"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// unavailableAnswer is what an ask says when the provider cannot answer: plainly, with no
// procedure made up in its place, and in the language of the question.
func unavailableAnswer(lang string) string {
	if lang == "de" {
		return "Der Wissensdienst ist nicht erreichbar, daher kann jetzt keine Antwort gegeben werden. " +
			"Es wurde kein Verfahren abgeleitet. Die Stichwortsuche steht über lookup weiter zur Verfügung."
	}
	return "The knowledge provider is unavailable, so no answer can be given now. " +
		"No procedure has been inferred. Keyword evidence is still available through lookup."
}

// answerBlocks is how many of the lookup's ranked blocks an answer from evidence quotes.
const answerBlocks = 3

// ExcerptChars is the longest excerpt of a block in an answer, in characters: about 130 English
// words, enough for the best sentences of a section with the ones after them, which in German
// procedures run long.
const ExcerptChars = 800

// Ask asks the provider for a grounded answer and records the trace. A lexical provider answers
// from the lookup's own ranked blocks and evidence state, so /ask and /lookup agree; a semantic
// provider (RAGcore) answers itself, with the L0 domain as its filter when L0's evidence for it
// is strong, and its answer is never grounded beyond what its managed citations and the question
// support. A provider failure gives an "unavailable" answer, not an error.
func (s *Service) Ask(ctx context.Context, req lookup.AskRequest) (lookup.Answer, error) {
	start := s.now()
	v, ep := s.epoch(req.AsOf)
	l := ep.Index.Lang(req.Language)
	if l == nil {
		return lookup.Answer{}, domain.ErrUnsupportedLanguage
	}
	conf, err := confine(l, req.Procedure)
	if err != nil {
		return lookup.Answer{}, err
	}
	question := analyseQuestion(l, req.Question)
	defer question.release() // read until the answer is made, and by the lookup beside it
	q := port.AskQuery{Question: question.text, Language: req.Language, Actor: req.Actor, CorrelationID: req.CorrelationID}
	a := s.askEvidence(ctx, l, v, conf, req, question, &q)
	if a.done != nil {
		defer func() { <-a.done }() // before the question is released, whatever happens
	}
	ga, err := s.askCall(ctx, l, question, conf, &q, &a.l1)
	ans := s.answerOf(ctx, l, v, req, question, q, ga, err, &a.l1)
	v.announceSources(req.Language, ans.Sources)
	if reason := v.nothingInForce(l); reason != "" {
		ans.EvidenceState, ans.Answer = port.StateUnavailable, "No answer: "+reason+"."
	}
	if a.check != nil {
		verdict := <-a.check
		if ans.EvidenceState == port.StateGrounded && !groundsCitation(verdict, v.markSources(req.Language, ans.Sources)) {
			ans.EvidenceState = port.StateInsufficient
			ans.Answer = uncheckedAnswer(req.Language) + ans.Answer
		}
		a.rel = verdict.Relevance
	}
	ans.Procedure, ans.Relevance = req.Procedure, &a.rel
	a.l1Done = s.now()
	ans.InvocationID = newID()
	s.recordAsk(ctx, start, v, req, ans, a)
	return ans, nil
}

// asking is an ask's evidence in the making: L0's hints, the layer and L1's outcome, when L0
// was done and L1 answered, the lookup's blocks an answer from evidence quotes (a lexical
// provider's), the lookup's judgement the answer carries, and, on a semantic provider, the
// lookup running beside the answer call.
type asking struct {
	hints          lookup.L0Hints
	layer          lookup.Layer
	l1             lookup.L1Details
	l0Done, l1Done time.Time
	blocks         []ranked
	evidence       []lookup.EvidenceBlock
	rel            lookup.Relevance
	check          chan lookup.Result
	done           chan struct{} // closed when the lookup beside the call has read the question
}

// askEvidence prepares an answer call: on a semantic provider, L0's hints and the category
// filter, the lookup started beside the call (a generated answer is grounded only when the
// lookup's own verdict grounds the procedure it cites, capAnswerState); on a lexical one, the
// lookup whose blocks and state the answer is made from.
// The question is the ask's, analysed once: the lookup an answer is made from reads it too.
func (s *Service) askEvidence(ctx context.Context, l *lexical.Lang, v dayView, conf confinement, req lookup.AskRequest,
	question *question, q *port.AskQuery) asking {
	var a asking
	if !s.provider.Semantic() {
		var res outcome
		res, a.l0Done = s.evidenceFor(ctx, l, v, req, question, q)
		a.hints, a.l1, a.layer = res.Retrieval.L0, res.Retrieval.L1, res.Retrieval.Layer
		a.blocks, a.evidence = res.blocks, res.EvidenceBlocks[:res.Retrieval.FinalBlockCount]
		a.rel = res.Relevance
		res.views.release()
		return a
	}
	check, done := make(chan lookup.Result, 1), make(chan struct{})
	a.check, a.done = check, done
	// The lookup beside the answer call reads the ask's question while the ask's steps read it
	// too: the kinds of fact it asks for, the one part read lazily, are read first, so that
	// both only read it, and Ask waits for the lookup (done) before it releases the question.
	question.answerKinds()
	go func() {
		defer close(done)
		res, _ := s.lookup(ctx, l, v, lookup.LookupRequest{Question: req.Question, Language: req.Language, TopK: answerBlocks,
			AsOf: v.day, Procedure: req.Procedure, Actor: req.Actor, CorrelationID: req.CorrelationID}, question, false)
		res.release() // its result holds neither the views nor the ranked blocks
		check <- res.Result
	}()
	a.hints, a.layer, a.l1 = s.askHints(l, question, q)
	if conf.on() {
		a.l1.CategoryFilter, q.Category = &conf.category, conf.category
	}
	a.l0Done = s.now()
	return a
}

// askCall makes the answer call, keeping a confirmed answer's citations of its procedure alone.
// As for a lookup, the filter narrows but never hides: an answer the filtered call could not
// ground, or one whose filter kept out the procedure the lexical search ranks first, is asked
// once more without it (not a confirmed one: its procedure's category is its filter).
func (s *Service) askCall(ctx context.Context, l *lexical.Lang, question *question, conf confinement, q *port.AskQuery,
	l1 *lookup.L1Details) (port.GroundedAnswer, error) {
	ga, err := s.ask(ctx, *q)
	ga.Sources = conf.sources(ga.Sources)
	if err == nil && !conf.on() && q.Category != "" && (ga.EvidenceState != port.StateGrounded || len(ga.Sources) == 0 ||
		s.provider.Semantic() && outsideFilter(l, l.SearchWeighted(question.terms, question.weights, "", 1), q.Category)) {
		q.Category = ""
		l1.Calls++
		s.unfilteredRetry(l1)
		ga, err = s.ask(ctx, *q)
	}
	return ga, err
}

// recordAsk emits an ask's metrics and records its trace.
func (s *Service) recordAsk(ctx context.Context, start time.Time, v dayView, req lookup.AskRequest, ans lookup.Answer, a asking) {
	sums := sourceSummaries(v, req.Language, ans.Sources)
	if !s.provider.Semantic() {
		sums = summaries(a.evidence, a.blocks)
	}
	span.Annotate(ctx, span.Annotations{Provider: s.provider.Name(), EvidenceState: string(ans.EvidenceState),
		Language: req.Language, Layer: string(a.layer), InvocationID: ans.InvocationID})
	s.emit(lookup.ToolAsk, a.layer, a.l1.Status, s.now().Sub(start))
	s.record(ctx, lookup.Trace{
		InvocationID: ans.InvocationID, Tool: cmp.Or(req.Tool, lookup.ToolAsk), ActorID: req.Actor.ID, Language: req.Language,
		RetrievalDetails: lookup.TraceDetails{
			Layer: a.layer, EvidenceState: ans.EvidenceState,
			L0: a.hints, L1: a.l1, CandidateCount: max(a.l1.CandidateCount, len(ans.Sources)), FinalBlockCount: len(ans.Sources),
			EvidenceSummaries: sums, Sidecar: s.askSidecarStatus(),
			LatencyMs: lookup.Latency{L0: ms(a.l0Done.Sub(start)), L1: ms(a.l1Done.Sub(a.l0Done)), Total: ms(s.now().Sub(start))},
			AsOf:      v.day, AsOfRequested: v.asked,
			Procedure: req.Procedure, Clarification: optionIDs(a.rel.Clarification), Complements: complementIDs(a.rel.Complements),
		},
	}, req.Question, req.CorrelationID)
}

// askHints are L0's hints for an answer from a semantic provider: the layer, and the category
// filter the answer call is narrowed by when L0 names one domain.
func (s *Service) askHints(l *lexical.Lang, question *question, q *port.AskQuery) (lookup.L0Hints, lookup.Layer, lookup.L1Details) {
	sc := getL0Scratch()
	defer sc.release() // only whether L0 matched is read
	hints, matches := l0(l, question, 0, sc)
	l1 := lookup.L1Details{Status: lookup.L1OK, Provider: s.provider.Name(), ScoreKind: s.provider.ScoreKind(), Calls: 1}
	if len(hints.Domains) == 1 {
		l1.CategoryFilter = &hints.Domains[0]
		q.Category = hints.Domains[0]
	}
	return hints, layerOf(len(matches) > 0, true), l1
}

// evidenceFor runs the lookup whose ranked blocks, excerpted for the question, and evidence state
// a lexical provider answers from, and puts them into q; it returns the lookup and when its L0
// was done.
func (s *Service) evidenceFor(ctx context.Context, l *lexical.Lang, v dayView, req lookup.AskRequest, question *question,
	q *port.AskQuery) (outcome, time.Time) {
	res, st := s.lookup(ctx, l, v, lookup.LookupRequest{Question: req.Question, Language: req.Language, TopK: answerBlocks,
		AsOf: v.day, Procedure: req.Procedure, Actor: req.Actor, CorrelationID: req.CorrelationID}, question, false)
	blocks := res.EvidenceBlocks[:res.Retrieval.FinalBlockCount]
	q.EvidenceState = res.EvidenceState
	for _, b := range blocks {
		q.Evidence = append(q.Evidence, port.AskEvidence{Block: passage(b),
			Excerpt: excerpt(l, question.words, question.answerKinds(), b.Content, ExcerptChars)})
	}
	return res, st.l0
}

// answerOf is the answer to an ask: the provider's, its state capped by its evidence, or an
// "unavailable" answer when the call failed; l1 records the outcome.
func (s *Service) answerOf(ctx context.Context, l *lexical.Lang, v dayView, req lookup.AskRequest, question *question,
	q port.AskQuery, ga port.GroundedAnswer, err error, l1 *lookup.L1Details) lookup.Answer {
	ans := lookup.Answer{Provider: s.provider.Name(), Sources: []port.AnswerSource{}, AsOf: v.day}
	switch {
	case err != nil:
		l1.Status = lookup.L1Failed
		if errors.Is(err, port.ErrUnavailable) {
			l1.Status = lookup.L1Unavailable
		}
		l1.ErrorClass = port.ErrorClass(err)
		s.log.WarnContext(ctx, "ask failed", "correlation_id", req.CorrelationID,
			"provider", s.provider.Name(), "error_class", l1.ErrorClass, "error", port.SafeError(err))
		ans.Answer, ans.EvidenceState, ans.AnswerKind = unavailableAnswer(req.Language), port.StateUnavailable, lookup.AnswerNone
	default:
		ans.Answer, ans.EvidenceState = ga.Answer, ga.EvidenceState
		if ga.Sources != nil {
			ans.Sources = ga.Sources
		}
		ans.AnswerKind = lookup.AnswerTemplate
		if ga.Generated {
			ans.AnswerKind = lookup.AnswerGenerated
		}
		if s.provider.Semantic() {
			if len(ans.Sources) == 0 {
				l1.Status = lookup.L1Empty
			}
			l1.CandidateCount = len(ans.Sources)
		}
		// A citation of a version not in force is marked and grounds nothing.
		checked := ans
		checked.Sources = v.markSources(req.Language, ans.Sources)
		ans.EvidenceState = s.capAnswerState(question, q, checked)
	}
	return ans
}

// sourceSummaries are an answer's sources as a trace records them.
func sourceSummaries(v dayView, lang string, sources []port.AnswerSource) []lookup.BlockSummary {
	sums := make([]lookup.BlockSummary, 0, len(sources))
	for _, src := range sources {
		sums = append(sums, lookup.BlockSummary{
			Source: knowledge.SectionSource(v.sourcePath(lang, src.DocumentID, src.Version), knowledge.Anchor(src.Section)),
			Title:  src.Title, RetrievalLayer: lookup.LayerL1, HitReasons: []string{reasonAnswer},
			DocumentID: src.DocumentID, Version: src.Version, Outdated: src.Outdated,
			Content: textproc.Clip(src.Excerpt, lookup.SummaryChars),
		})
	}
	return sums
}

// capAnswerState is the answer's evidence state, never more than its evidence supports: an
// answer from the lookup's evidence keeps the lookup's state; a generated answer is grounded only
// when the provider says so, it cites at least one managed source, and the question has enough
// informative words to be answered at all.
func (s *Service) capAnswerState(question *question, q port.AskQuery, ans lookup.Answer) port.EvidenceState {
	if ans.EvidenceState != port.StateGrounded {
		return ans.EvidenceState
	}
	if q.EvidenceState != "" {
		if q.EvidenceState != port.StateGrounded {
			return port.StateInsufficient
		}
		return port.StateGrounded
	}
	if len(ans.Sources) == 0 || question.resolved.Words() < minInformativeWords {
		return port.StateInsufficient
	}
	return port.StateGrounded
}

// passage is the block as a provider answering from the lookup's evidence sees it.
func passage(b lookup.EvidenceBlock) port.Passage {
	return port.Passage{Source: b.Source, DocumentID: b.DocumentID, Version: b.Version, EffectiveDate: b.EffectiveDate,
		Title: b.Title, Breadcrumb: b.Breadcrumb, Section: b.Section, Category: b.Category, Content: b.Content, Rank: b.Rank}
}

// askSidecarStatus is the sidecar's part in an ask: it compares lookups only.
func (s *Service) askSidecarStatus() lookup.SidecarStatus {
	if s.opts.Sidecar == nil {
		return lookup.SidecarStatus{Status: domain.SidecarDisabled}
	}
	return lookup.SidecarStatus{Enabled: true, Status: domain.SidecarSkipped}
}

// ask makes one answer call under the provider deadline.
func (s *Service) ask(ctx context.Context, q port.AskQuery) (port.GroundedAnswer, error) {
	ctx, end := span.Start(ctx, "l1")
	defer end()
	pctx, cancel := s.providerContext(ctx)
	defer cancel()
	return s.provider.Ask(pctx, q)
}

// groundsCitation reports whether the lookup's verdict grounds one of the procedures an answer
// cites: the provider's own "grounded" is its score alone, which a retriever's error can make
// confident; the lookup weighs it against the lexical search and the front matter.
func groundsCitation(verdict lookup.Result, sources []port.AnswerSource) bool {
	if verdict.EvidenceState != port.StateGrounded || verdict.Primary == nil {
		return false
	}
	for _, src := range sources {
		if src.DocumentID == verdict.Primary.DocumentID {
			return true
		}
	}
	return false
}

// uncheckedAnswer introduces a generated answer the lookup's verdict does not ground, in the
// language of the answer.
func uncheckedAnswer(lang string) string {
	if lang == "de" {
		return "Die Verfahren decken diese Frage nicht eindeutig ab: die folgende Antwort ist nicht belegt, bitte die Situation klären. "
	}
	return "The procedures do not clearly cover this question: the following answer is not confirmed, ask which situation applies. "
}
