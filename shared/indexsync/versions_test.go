package indexsync_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal/ddbtest"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/ragcorefake"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/indexsync"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/ragcore"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/status"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// versionRig is a RAGcore fake that serves the versions in force on 2026-12-31 (access-failure
// 1.4, damage-procedure 1.3) and the sync service over the versioned corpus, its clock set by at.
type versionRig struct {
	fake   *ragcorefake.Server
	sync   *indexsync.Service
	status *status.Service
	clock  atomic.Pointer[time.Time]
	ticks  atomic.Int64
}

var scheduler = port.Call{Actor: port.Actor{ID: "service:scheduler", Scopes: []string{"knowledge:read"}}, CorrelationID: "evt-1"}

func newVersionRig(t *testing.T, records func(now func() time.Time) status.Records) *versionRig {
	t.Helper()
	return newVersionRigPublishing(t, records, true)
}

// newVersionRigPublishing is newVersionRig with a RAGcore that publishes an upload at once, or
// keeps it processing until told (ragcorefake.Server.SetVersionStatus).
func newVersionRigPublishing(t *testing.T, records func(now func() time.Time) status.Records, publish bool) *versionRig {
	t.Helper()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := testutil.LoadVersioned(t)
	r := &versionRig{fake: ragcorefake.New(ragcorefake.Options{Token: "t", PublishUploads: publish})}
	r.fake.LoadCorpus(c.On("2026-12-31"), "mobilityops-procedures")
	srv := httptest.NewServer(r.fake)
	t.Cleanup(srv.Close)
	client, err := ragcore.New(ragcore.Options{BaseURL: srv.URL, Token: "t", Timeout: 5 * time.Second, Namespace: ns,
		Breaker: ragcore.BreakerOptions{Failures: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	p := ragcore.NewProvider(client, c, ragcore.ProviderOptions{})
	// The clock moves a millisecond at every reading, as a real one would between two
	// verifications.
	now := func() time.Time { return r.clock.Load().Add(time.Duration(r.ticks.Add(1)) * time.Millisecond) }
	rec := records(now)
	log := slog.New(slog.DiscardHandler)
	st := status.New(c, p, p, rec, status.Options{Namespace: ns, Now: now, TimeZone: berlin}, log)
	r.status = st
	r.sync = indexsync.New(c, p, rec.(indexsync.Reports), st, ns, log).WithClock(now, berlin)
	r.at(t, "2027-01-02", 10, 0)
	return r
}

// at sets the clock to a time of day in Berlin.
func (r *versionRig) at(t *testing.T, day string, hour, minute int) {
	t.Helper()
	berlin, _ := time.LoadLocation("Europe/Berlin")
	d, err := time.ParseInLocation(time.DateOnly, day, berlin)
	if err != nil {
		t.Fatal(err)
	}
	d = d.Add(time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute)
	r.clock.Store(&d)
}

// uploads are the versions uploaded so far, "<source>/<id>@<version>".
func (r *versionRig) uploads() []string {
	var out []string
	for _, q := range r.fake.Requests() {
		if q.Method != http.MethodPut {
			continue
		}
		version := ""
		if b, ok := q.Body.(map[string]any); ok {
			if m, ok := b["metadata"].(map[string]any); ok {
				version, _ = m["version"].(string)
			}
		}
		out = append(out, strings.TrimPrefix(q.Path, "/v1/sources/")+"@"+version)
	}
	return out
}

var stores = map[string]func(t *testing.T) func(now func() time.Time) status.Records{
	"memory": func(*testing.T) func(now func() time.Time) status.Records {
		return func(now func() time.Time) status.Records { return store.NewMemoryAt(now) }
	},
	"dynamodb": func(t *testing.T) func(now func() time.Time) status.Records {
		return func(now func() time.Time) status.Records {
			_, client := ddbtest.Local(t)
			return store.NewDynamo(client, ddbtest.NewTable(t, "sync-versions"), ddblocal.CallTimeout, now)
		}
	},
}

// POST /sync the day after access-failure 1.5 took effect and ten days before damage-procedure
// 1.4 does: the manifest holds 1.5 and 1.3, so 1.5 is uploaded and the coming 1.4 is not.
func TestManifestSyncSendsTheVersionInForce(t *testing.T) {
	r := newVersionRig(t, stores["memory"](t))
	run, err := r.sync.Sync(context.Background(), port.Call{Actor: port.Actor{ID: "op", Scopes: []string{"knowledge:sync"}}}, "all")
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range run.Results {
		if res.Documents != 11 || res.Uploaded != 1 || res.Unchanged != 10 || len(res.Failed) != 0 {
			t.Errorf("%s: %+v, want 11 documents, 1 uploaded, 10 unchanged", res.Language, res)
		}
	}
	for _, u := range r.uploads() {
		if strings.Contains(u, "damage-procedure@1.4") || strings.Contains(u, testutil.AheadID) {
			t.Errorf("uploaded %s before its day", u)
		}
	}
	if got := strings.Join(r.uploads(), " "); !strings.Contains(got, "mobilityops-procedures-en/documents/access-failure@1.5") ||
		!strings.Contains(got, "mobilityops-procedures-de/documents/access-failure@1.5") {
		t.Errorf("uploads %s, want access-failure 1.5 in both languages", got)
	}
}

// The schedule publishes a version on its day, once: before midnight in Berlin it sends nothing,
// after it the version that took effect, and a second run that day nothing again.
func TestScheduledRunSwitchesAVersionOnItsDayOnce(t *testing.T) {
	for name, records := range stores {
		t.Run(name, func(t *testing.T) {
			r := newVersionRig(t, records(t))
			r.at(t, "2026-12-31", 23, 30)
			for _, res := range r.sync.Refresh(context.Background(), scheduler) {
				if len(res.Switched) != 0 || res.Outdated != 0 || !res.Complete {
					t.Errorf("on the eve, %s: %+v", res.Language, res)
				}
			}
			if u := r.uploads(); len(u) != 0 {
				t.Fatalf("uploads on the eve: %v", u)
			}

			r.at(t, "2027-01-01", 0, 30)
			for _, res := range r.sync.Refresh(context.Background(), scheduler) {
				want := indexsync.Switched{DocumentID: "access-failure", Version: "1.5", EffectiveDate: "2027-01-01", From: "1.4"}
				if len(res.Switched) != 1 || res.Switched[0] != want || res.Outdated != 0 || res.Confirmed != 11 {
					t.Errorf("on the day, %s: %+v, want %+v switched and nothing outdated after", res.Language, res, want)
				}
			}
			if u := r.uploads(); len(u) != 2 {
				t.Errorf("uploads on the day: %v, want access-failure 1.5 in two languages", u)
			}

			r.at(t, "2027-01-01", 0, 35)
			for _, res := range r.sync.Refresh(context.Background(), scheduler) {
				if len(res.Switched) != 0 {
					t.Errorf("second run, %s: switched %+v again", res.Language, res.Switched)
				}
			}
			if u := r.uploads(); len(u) != 2 {
				t.Errorf("uploads after the second run: %v, want the two of the first", u)
			}
		})
	}
}

// A procedure whose first version takes effect is published by the schedule on its day, once;
// before its day it is neither uploaded nor counted as missing.
func TestScheduledRunPublishesANewProcedureOnItsDay(t *testing.T) {
	r := newVersionRig(t, stores["memory"](t))
	r.at(t, knowledge.AddDays(testutil.AheadDay, -1), 12, 0)
	r.sync.Refresh(context.Background(), scheduler)
	for _, u := range r.uploads() {
		if strings.Contains(u, testutil.AheadID) {
			t.Fatalf("uploaded %s before its day", u)
		}
	}
	r.at(t, testutil.AheadDay, 0, 5)
	for _, res := range r.sync.Refresh(context.Background(), scheduler) {
		var published bool
		for _, s := range res.Switched {
			published = published || (s.DocumentID == testutil.AheadID && s.Version == "1.0" && s.From == "")
		}
		if !published || !res.Complete {
			t.Errorf("on its day, %s: %+v, want %s 1.0 published from nothing", res.Language, res, testutil.AheadID)
		}
	}
	n := len(r.uploads())
	r.at(t, testutil.AheadDay, 0, 10)
	r.sync.Refresh(context.Background(), scheduler)
	if again := len(r.uploads()); again != n {
		t.Errorf("a second run on the day uploaded %d more", again-n)
	}
}

// A manifest sync that uploads a version names each document it switched (per language: id,
// from, to) and refreshes the verification of what it uploaded: GET /status right after it shows
// RAGcore's truth, never the cached entry from before the sync. While RAGcore processes the upload,
// the document stays outdated with "uploaded" and is not counted; once published, it is confirmed.
func TestSyncRefreshesTheVerificationOfWhatItUploaded(t *testing.T) {
	for name, publish := range map[string]bool{"processing": false, "published at once": true} {
		t.Run(name, func(t *testing.T) {
			r := newVersionRigPublishing(t, stores["memory"](t), publish)
			ctx := context.Background()
			reader := port.Call{Actor: port.Actor{ID: "console", Scopes: []string{"knowledge:read"}}}
			// /status before the sync: a cached entry that lists 1.4 as RAGcore's active version.
			before, err := r.status.Status(ctx, "en", reader)
			if err != nil || len(before.Verification.Outdated) != 1 {
				t.Fatalf("status before the sync: %+v %v", before.Verification, err)
			}
			run, err := r.sync.Sync(ctx, port.Call{Actor: port.Actor{ID: "op", Scopes: []string{"knowledge:sync"}}}, "all")
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range run.Results {
				want := []domain.SwitchedDocument{{DocumentID: "access-failure", From: "1.4", To: "1.5"}}
				if !slices.Equal(res.Switched, want) {
					t.Errorf("%s: switched %+v, want %+v", res.Language, res.Switched, want)
				}
			}
			for _, lang := range knowledge.Languages {
				st, err := r.status.Status(ctx, lang, reader)
				if err != nil {
					t.Fatal(err)
				}
				v := st.Verification
				if publish {
					if len(v.Outdated) != 0 || st.DocumentCount == nil || *st.DocumentCount != 11 {
						t.Errorf("%s right after a published upload: outdated %+v, count %v", lang, v.Outdated, st.DocumentCount)
					}
					continue
				}
				want := []domain.OutdatedSource{{DocumentID: "access-failure", InForce: "1.5", Active: "1.4", Uploaded: "1.5"}}
				if !slices.Equal(v.Outdated, want) || st.DocumentCount == nil || *st.DocumentCount != 10 ||
					!slices.Contains(v.Missing, "access-failure") {
					t.Errorf("%s right after an upload RAGcore processes: outdated %+v, missing %v, count %v, want %+v and 10",
						lang, v.Outdated, v.Missing, st.DocumentCount, want)
				}
			}
		})
	}
}
