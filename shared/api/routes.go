package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// Request limits of the API contract (docs/openapi.yaml).
const (
	MaxQuestionChars = 2000
	DefaultTopK      = 5
	MaxTopK          = 20
)

type lookupBody struct {
	Question *string `json:"question"`
	Language *string `json:"language"`
	TopK     *int    `json:"top_k"`
}

type lookupResponse struct {
	retrieval.Result
	CorrelationID string `json:"correlation_id"`
}

func (h *Handler) lookup(ctx context.Context, c *call) (any, *Error) {
	var b lookupBody
	if err := decode(c, &b); err != nil {
		return nil, err
	}
	q, lang, detected, err := questionAndLanguage(b.Question, b.Language)
	if err != nil {
		return nil, err
	}
	topK := DefaultTopK
	if b.TopK != nil {
		if *b.TopK < 1 || *b.TopK > MaxTopK {
			return nil, invalid("top_k", fmt.Sprintf("top_k must be an integer from 1 to %d", MaxTopK))
		}
		topK = *b.TopK
	}
	res, e := h.svc.Lookup(ctx, retrieval.LookupRequest{Question: q, Language: lang, TopK: topK,
		Actor: c.actor, CorrelationID: c.correlationID})
	if e != nil {
		return nil, h.domainError(ctx, c, e)
	}
	res.Language, res.LanguageDetected = lang, detected
	return lookupResponse{Result: res, CorrelationID: c.correlationID}, nil
}

type askBody struct {
	Question *string `json:"question"`
	Language *string `json:"language"`
}

type askResponse struct {
	retrieval.Answer
	CorrelationID string `json:"correlation_id"`
}

func (h *Handler) ask(ctx context.Context, c *call) (any, *Error) {
	var b askBody
	if err := decode(c, &b); err != nil {
		return nil, err
	}
	q, lang, detected, err := questionAndLanguage(b.Question, b.Language)
	if err != nil {
		return nil, err
	}
	ans, e := h.svc.Ask(ctx, retrieval.AskRequest{Question: q, Language: lang, Actor: c.actor, CorrelationID: c.correlationID})
	if e != nil {
		return nil, h.domainError(ctx, c, e)
	}
	ans.Language, ans.LanguageDetected = lang, detected
	return askResponse{Answer: ans, CorrelationID: c.correlationID}, nil
}

// questionAndLanguage validates the fields lookup and ask share. A missing (or null) language is
// detected from the validated question ("en" when it cannot be told), and detected says so; a
// given language always wins and must be supported.
func questionAndLanguage(question, language *string) (q, lang string, detected bool, err *Error) {
	if question == nil || strings.TrimSpace(*question) == "" {
		return "", "", false, invalid("question", "question is required and must not be blank")
	}
	if n := utf8.RuneCountInString(*question); n > MaxQuestionChars {
		return "", "", false, invalid("question", fmt.Sprintf("question has %d characters; the limit is %d", n, MaxQuestionChars))
	}
	if language == nil {
		lang, _ = textproc.DetectLanguage(*question)
		return *question, lang, true, nil
	}
	if lang, err = languageOf(language); err != nil {
		return "", "", false, err
	}
	return *question, lang, false, nil
}

// languageOf checks a language: missing means "en" (GET /status; lookup and ask detect it
// instead, and the sync routes require one), anything unsupported is unsupported_language with
// the supported list.
func languageOf(language *string) (string, *Error) {
	if language == nil {
		return "en", nil
	}
	if !textproc.Supported(*language) {
		return "", &Error{Status: http.StatusBadRequest, Code: CodeUnsupportedLanguage, Field: "language",
			Message: fmt.Sprintf("language %q is not supported; supported languages: %s",
				retrieval.Clip(*language, 16), strings.Join(textproc.Languages, ", "))}
	}
	return *language, nil
}

type healthResponse struct {
	domain.Health
	CorrelationID string `json:"correlation_id"`
}

// health is GET /health: ok, degraded or unavailable, with the provider's and the store's
// component states (status.CheckHealth). It answers 200 in every state: the body says which.
func (h *Handler) health(ctx context.Context, c *call) (any, *Error) {
	return healthResponse{Health: h.status.CheckHealth(ctx, retrieval.Call{Actor: c.actor, CorrelationID: c.correlationID}),
		CorrelationID: c.correlationID}, nil
}

type invocationResponse struct {
	retrieval.Trace
	CorrelationID string `json:"correlation_id"`
}

func (h *Handler) invocation(ctx context.Context, c *call) (any, *Error) {
	notFound := &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: "no invocation with this id is visible to you"}
	if !correlationPattern.MatchString(c.param) {
		return nil, notFound
	}
	t, err := h.svc.Invocation(ctx, c.param, c.actor)
	switch {
	case errors.Is(err, retrieval.ErrNotFound):
		return nil, notFound
	case err != nil:
		h.log.ErrorContext(ctx, "read trace", "correlation_id", c.correlationID, "invocation_id", c.param, "error", err)
		return nil, &Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable,
			Message: "the trace store is unavailable; try again shortly"}
	}
	return invocationResponse{Trace: t, CorrelationID: c.correlationID}, nil
}
