package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/request"
)

// syncRoutes are the routes of the sync function (whose main also serves the schedule).
var syncRoutes = []*route{
	{FunctionSync, "POST /sync", []string{ScopeSync}, false, syncService, jsonRoute((*Handler).postSync)},
	{FunctionSync, "POST /sync-reports", []string{ScopeSyncReport}, false, syncService, jsonRoute((*Handler).postSyncReport)},
}

type syncBody struct {
	Language *string `json:"language"`
}

type syncResponse struct {
	domain.Run
	CorrelationID string `json:"correlation_id"`
}

func (h *Handler) postSync(ctx context.Context, c *call) (any, *Error) {
	var b syncBody
	if err := decode(c, &b); err != nil {
		return nil, err
	}
	if b.Language == nil {
		return nil, invalid("language", `language is required: one of `+strings.Join(knowledge.Languages, ", ")+`, or "all"`)
	}
	lang := "all"
	if *b.Language != lang {
		l, e := request.Language(b.Language)
		if e != nil {
			err := badRequest(e)
			err.Message += " (or all)"
			return nil, err
		}
		lang = l
	}
	run, err := h.sync.Sync(ctx, port.Call{Actor: c.actor, CorrelationID: c.correlationID}, lang)
	if err != nil {
		return nil, h.domainError(ctx, c, err)
	}
	return syncResponse{Run: run, CorrelationID: c.correlationID}, nil
}

type syncReportBody struct {
	RunID      *string `json:"run_id"`
	Language   *string `json:"language"`
	Synced     *int    `json:"synced_document_count"`
	Failed     *int    `json:"failed_document_count"`
	FinishedAt *string `json:"finished_at"`
}

type syncReportResponse struct {
	RunID         string `json:"run_id"`
	Language      string `json:"language"`
	Stored        bool   `json:"stored"`
	Duplicate     bool   `json:"duplicate"`
	Differs       bool   `json:"differs,omitempty"`
	Latest        bool   `json:"latest"`
	CorrelationID string `json:"correlation_id"`
}

// maxClockSkew is how far in the future a report's finished_at may be: a report from the future
// would stay the newest for good.
const maxClockSkew = 5 * time.Minute

// earliestFinishedAt is the earliest finished_at a report may carry: a sync run of this service
// cannot have finished before it, so an earlier time is a mistake of the sender (the store would
// order it correctly, as the oldest report).
var earliestFinishedAt = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// maxReportedDocuments bounds the counts of a report: more than any corpus holds is a mistake.
const maxReportedDocuments = 100000

func (h *Handler) postSyncReport(ctx context.Context, c *call) (any, *Error) {
	var b syncReportBody
	if err := decode(c, &b); err != nil {
		return nil, err
	}
	if b.RunID == nil || !domain.ValidRunID(*b.RunID) {
		return nil, invalid("run_id", "run_id is required: 1 to 128 characters of A-Z a-z 0-9 . _ : -")
	}
	if b.Language == nil {
		return nil, invalid("language", "language is required: one of "+strings.Join(knowledge.Languages, ", "))
	}
	lang, e := request.Language(b.Language)
	if e != nil {
		return nil, badRequest(e)
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"synced_document_count", b.Synced}, {"failed_document_count", b.Failed}} {
		if f.v == nil || *f.v < 0 || *f.v > maxReportedDocuments {
			return nil, invalid(f.name, fmt.Sprintf("%s is required: an integer from 0 to %d", f.name, maxReportedDocuments))
		}
	}
	if b.FinishedAt == nil {
		return nil, invalid("finished_at", "finished_at is required: an RFC 3339 time such as 2026-11-29T18:00:00Z")
	}
	finished, err := time.Parse(time.RFC3339, *b.FinishedAt)
	if err != nil {
		return nil, invalid("finished_at", "finished_at must be an RFC 3339 time such as 2026-11-29T18:00:00Z")
	}
	if finished.After(h.now().Add(maxClockSkew)) {
		return nil, invalid("finished_at", "finished_at is in the future")
	}
	if finished.Before(earliestFinishedAt) {
		return nil, invalid("finished_at", "finished_at must be 2000-01-01T00:00:00Z or later")
	}
	res, err := h.sync.Report(ctx, port.Call{Actor: c.actor, CorrelationID: c.correlationID}, domain.SyncReport{
		RunID: *b.RunID, Language: lang, Synced: *b.Synced, Failed: *b.Failed, FinishedAt: finished.UTC()})
	// The class is request.Classify's; a failure of no known class is the store's, and the
	// report can be sent again.
	switch e := request.Classify(err); {
	case err == nil:
	case e.Code == request.CodeInvalidRequest:
		return nil, classified(e)
	default:
		h.log.ErrorContext(ctx, "store sync report", "correlation_id", c.correlationID, "run_id", *b.RunID,
			"error", port.SafeError(err))
		return nil, &Error{Status: http.StatusServiceUnavailable, Code: request.CodeUnavailable,
			Message: "the report could not be stored; send it again (the same run_id is stored once)"}
	}
	if !res.Duplicate {
		c.status = http.StatusAccepted
	}
	return syncReportResponse{RunID: *b.RunID, Language: lang, Stored: !res.Duplicate, Duplicate: res.Duplicate,
		Differs: res.Differs, Latest: res.Latest, CorrelationID: c.correlationID}, nil
}
