package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ragcorefake"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/lookup"
)

// The versions end to end, through the HTTP routes: KNOWLEDGE_DIR holds access-failure 1.5 (in
// force since yesterday) beside 1.4, damage-procedure 1.4 (in ten days) beside 1.3 and a
// procedure whose one version lies ahead; RAGcore still serves the versions of 2026-12-31.
func TestVersionsThroughTheAPI(t *testing.T) {
	dir := testutil.VersionedDir(t)
	c, err := knowledge.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fake := ragcorefake.New(ragcorefake.Options{Token: "t", PublishUploads: true})
	fake.LoadCorpus(c.On("2026-12-31"), "mobilityops-procedures")
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	env := map[string]string{"KNOWLEDGE_DIR": dir, "KNOWLEDGE_PROVIDER": "ragcore", "RAGCORE_BASE_URL": srv.URL,
		"RAGCORE_TOKEN": "t", "AUTH_MODE": "local-headers"}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	today := time.Date(2027, 1, 2, 9, 0, 0, 0, time.UTC) // 10:00 in Berlin
	a, err := NewFunctionAt(context.Background(), cfg, io.Discard, "", func() time.Time { return today })
	if err != nil {
		t.Fatal(err)
	}
	h := a.Handler.HTTP(RequestTimeout)
	send := func(method, path, scope, body string) (int, []byte) {
		t.Helper()
		req := httptest.NewRequest(method, "/api/v1/knowledge"+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("X-Actor-Id", "agent-7")
		req.Header.Set("X-Actor-Scope", scope)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Body.Bytes()
	}
	find := func(body string) lookup.Result {
		t.Helper()
		code, b := send(http.MethodPost, "/lookup", "knowledge:read", body)
		var res lookup.Result
		if err := json.Unmarshal(b, &res); err != nil || code != http.StatusOK {
			t.Fatalf("lookup %s: %d %s", body, code, b)
		}
		return res
	}

	unlock := `"question":"How many remote unlock attempts are allowed when the digital key does not open the car?","language":"en"`
	res := find("{" + unlock + "}")
	outdated := 0
	for _, b := range res.EvidenceBlocks {
		switch {
		case b.Outdated:
			outdated++
			if b.DocumentID != "access-failure" || b.Version != "1.4" {
				t.Errorf("outdated block %s %s", b.DocumentID, b.Version)
			}
		case b.DocumentID == "access-failure" && b.Version != "1.5":
			t.Errorf("access-failure %s served as evidence on 2027-01-02", b.Version)
		}
	}
	if outdated == 0 || res.Primary == nil || res.Primary.Outdated || res.AsOf != "2027-01-02" {
		t.Errorf("%d outdated blocks, primary %+v, as_of %q", outdated, res.Primary, res.AsOf)
	}

	// The trace says which day and which versions answered.
	code, b := send(http.MethodGet, "/invocations/"+res.InvocationID, "knowledge:read", "")
	var tr lookup.Trace
	if err := json.Unmarshal(b, &tr); err != nil || code != http.StatusOK {
		t.Fatalf("invocation: %d %s", code, b)
	}
	if tr.RetrievalDetails.AsOf != "2027-01-02" || tr.RetrievalDetails.AsOfRequested {
		t.Errorf("trace as_of %q requested %v", tr.RetrievalDetails.AsOf, tr.RetrievalDetails.AsOfRequested)
	}
	served := false
	for _, s := range tr.RetrievalDetails.EvidenceSummaries {
		if s.DocumentID == "access-failure" && s.Version != "1.5" && !s.Outdated {
			t.Errorf("trace summary %+v", s)
		}
		served = served || (s.DocumentID == "access-failure" && s.Version == "1.5" && !s.Outdated)
	}
	if !served {
		t.Errorf("the trace names no block of access-failure 1.5: %+v", tr.RetrievalDetails.EvidenceSummaries)
	}

	// as_of before the switch: the old version, and nothing outdated.
	res = find("{" + unlock + `,"as_of":"2026-12-31"}`)
	old := false
	for _, b := range res.EvidenceBlocks {
		if b.Outdated || (b.DocumentID == "access-failure" && b.Version != "1.4") {
			t.Errorf("as_of 2026-12-31: %s %s outdated %v", b.DocumentID, b.Version, b.Outdated)
		}
		old = old || (b.DocumentID == "access-failure" && b.Version == "1.4")
	}
	if !old {
		t.Error("as_of 2026-12-31: no block of access-failure 1.4")
	}
	if res.AsOf != "2026-12-31" {
		t.Errorf("as_of echoed %q", res.AsOf)
	}

	// The coming damage-procedure 1.4 is announced, not served.
	res = find(`{"question":"There is a deep scratch and a dent on the rear door, how do I report the damage?","language":"en"}`)
	announced := false
	for _, b := range res.EvidenceBlocks {
		if b.DocumentID == "damage-procedure" && !b.Outdated {
			if b.Version != "1.3" {
				t.Errorf("damage-procedure %s served before its day", b.Version)
			}
			announced = b.NextVersion != nil && *b.NextVersion == lookup.NextVersion{Version: "1.4", EffectiveDate: testutil.ComingDay}
		}
	}
	if !announced {
		t.Error("damage-procedure blocks do not announce 1.4")
	}

	for _, bad := range []string{`"2027-13-01"`, `"02.01.2027"`, `"1999-12-31"`, `20270102`} {
		code, b := send(http.MethodPost, "/lookup", "knowledge:read", "{"+unlock+`,"as_of":`+bad+"}")
		if code != http.StatusBadRequest || !strings.Contains(string(b), `"field":"as_of"`) {
			t.Errorf("as_of %s: %d %s", bad, code, b)
		}
	}

	// /status counts the 11 procedures in force (13 files a language) and lists the source
	// RAGcore serves in its old version.
	code, b = send(http.MethodGet, "/status?language=en", "knowledge:read", "")
	var st domain.Status
	if err := json.Unmarshal(b, &st); err != nil || code != http.StatusOK {
		t.Fatalf("status: %d %s", code, b)
	}
	want := domain.OutdatedSource{DocumentID: "access-failure", InForce: "1.5", Active: "1.4"}
	if st.SourceDocumentCount != 11 || len(st.Verification.Outdated) != 1 || st.Verification.Outdated[0] != want {
		t.Errorf("status: %d sources, outdated %+v", st.SourceDocumentCount, st.Verification.Outdated)
	}

	// POST /sync uploads the version in force, never the coming one.
	code, b = send(http.MethodPost, "/sync", "knowledge:sync", `{"language":"all"}`)
	if code != http.StatusOK {
		t.Fatalf("sync: %d %s", code, b)
	}
	var run domain.Run
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	for _, r := range run.Results {
		if r.Documents != 11 || r.Uploaded != 1 {
			t.Errorf("sync %s: %+v, want 11 documents, 1 uploaded", r.Language, r)
		}
	}
	for _, q := range fake.Requests() {
		if q.Method != http.MethodPut {
			continue
		}
		body, _ := q.Body.(map[string]any)
		meta, _ := body["metadata"].(map[string]any)
		if v := meta["version"]; strings.Contains(q.Path, testutil.AheadID) ||
			(strings.Contains(q.Path, "damage-procedure") && v != "1.3") || (strings.Contains(q.Path, "access-failure") && v != "1.5") {
			t.Errorf("uploaded %s version %v", q.Path, v)
		}
	}
}
