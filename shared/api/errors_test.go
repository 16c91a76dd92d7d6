package api_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
)

// fakes stands for the three services: every method answers err (wrapped, as services wrap it).
type fakes struct {
	// Embedded, so that an operation added to a service's interface needs no change here.
	//lint:ignore U1000 embedded for its methods, which an operation added to the interface brings along
	lookupService
	//lint:ignore U1000 embedded for its methods, which an operation added to the interface brings along
	statusService
	//lint:ignore U1000 embedded for its methods, which an operation added to the interface brings along
	syncService
	err error
}

var (
	_ api.Lookup = fakes{}
	_ api.Status = fakes{}
	_ api.Sync   = fakes{}
)

func (f fakes) wrapped() error { return fmt.Errorf("fake service: %w", f.err) }

func (f fakes) Lookup(context.Context, lookup.LookupRequest) (lookup.Result, error) {
	return lookup.Result{}, f.wrapped()
}

func (f fakes) Ask(context.Context, lookup.AskRequest) (lookup.Answer, error) {
	return lookup.Answer{}, f.wrapped()
}

func (f fakes) Invocation(context.Context, string, port.Actor) (lookup.Trace, error) {
	return lookup.Trace{}, f.wrapped()
}

func (f fakes) Status(context.Context, string, port.Call) (domain.Status, error) {
	return domain.Status{}, f.wrapped()
}

func (f fakes) CheckHealth(context.Context, port.Call) domain.Health { return domain.Health{} }

func (f fakes) Sync(context.Context, port.Call, string) (domain.Run, error) {
	return domain.Run{}, f.wrapped()
}

func (f fakes) Report(context.Context, port.Call, domain.SyncReport) (domain.ReportResult, error) {
	return domain.ReportResult{}, f.wrapped()
}

// TestDomainErrorsMapToStatuses: the services' sentinel errors become the contract's statuses and
// codes in one place, whichever route returns them; anything else is a 500 whose text stays in
// the log.
func TestDomainErrorsMapToStatuses(t *testing.T) {
	t.Parallel()
	admin := map[string]string{"sub": "ops-1", "scope": "knowledge:read knowledge:sync knowledge:admin"}
	routes := []struct{ method, path, body string }{
		{"POST", "/api/v1/knowledge/lookup", `{"question":"Kratzer an der Tür","language":"de"}`},
		{"POST", "/api/v1/knowledge/ask", `{"question":"Kratzer an der Tür","language":"de"}`},
		{"GET", "/api/v1/knowledge/status?language=en", ""},
		{"POST", "/api/v1/knowledge/sync", `{"language":"en"}`},
	}
	secret := errors.New("dial tcp 10.0.0.7:443: connection refused")
	tests := []struct {
		err    error
		status int
		code   string
	}{
		{domain.ErrUnsupportedLanguage, 400, "unsupported_language"},
		{domain.ErrNotFound, 404, "not_found"},
		{port.ErrUnavailable, 503, "unavailable"},
		{secret, 500, "internal"},
	}
	for _, tc := range tests {
		for _, r := range routes {
			t.Run(fmt.Sprintf("%s %s %d", r.method, r.path, tc.status), func(t *testing.T) {
				t.Parallel()
				logs := &bytes.Buffer{}
				f := fakes{err: tc.err}
				h := api.New(api.Services{Lookup: f, Status: f, Sync: f}, api.AuthJWT, slog.New(slog.NewJSONHandler(logs, nil)))
				ev := event(r.method, r.path, r.body, admin, nil)
				if i := bytes.IndexByte([]byte(r.path), '?'); i >= 0 {
					ev.RawPath, ev.RequestContext.HTTP.Path = r.path[:i], r.path[:i]
					ev.RawQueryString = r.path[i+1:]
				}
				resp, body := call(t, h, ev)
				e, _ := body["error"].(map[string]any)
				if resp.StatusCode != tc.status || e["code"] != tc.code {
					t.Fatalf("status %d %v, want %d %s: %s", resp.StatusCode, e["code"], tc.status, tc.code, resp.Body)
				}
				if bytes.Contains([]byte(resp.Body), []byte("10.0.0.7")) {
					t.Errorf("the error's text reached the client: %s", resp.Body)
				}
			})
		}
	}
}

// TestStoreErrorsMapToStatuses: the routes whose failure is the store's say so: an unknown
// invocation is 404 and an unreadable one 503; a report that cannot be stored as given is 400 and
// one that could not be stored 503.
func TestStoreErrorsMapToStatuses(t *testing.T) {
	t.Parallel()
	admin := map[string]string{"sub": "ops-1", "scope": "knowledge:read knowledge:admin knowledge:sync:report"}
	report := `{"run_id":"run-1","language":"en","synced_document_count":11,"failed_document_count":0,"finished_at":"2026-11-29T18:00:00Z"}`
	tests := []struct {
		name, method, path, body string
		err                      error
		status                   int
	}{
		{"unknown invocation", "GET", "/api/v1/knowledge/invocations/INV1", "", domain.ErrNotFound, 404},
		{"unreadable invocation", "GET", "/api/v1/knowledge/invocations/INV1", "", errors.New("throttled"), 503},
		{"invalid report", "POST", "/api/v1/knowledge/sync-reports", report, domain.ErrInvalidReport, 400},
		{"report not stored", "POST", "/api/v1/knowledge/sync-reports", report, errors.New("throttled"), 503},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fakes{err: tc.err}
			h := api.New(api.Services{Lookup: f, Status: f, Sync: f}, api.AuthJWT, slog.New(slog.DiscardHandler))
			if resp, _ := call(t, h, event(tc.method, tc.path, tc.body, admin, nil)); resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tc.status, resp.Body)
			}
		})
	}
}
