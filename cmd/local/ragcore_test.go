package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ragcorefake"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
)

// TestLocalAPIWithRAGcore runs the local API binary as
// `KNOWLEDGE_PROVIDER=ragcore RAGCORE_BASE_URL=... RAGCORE_TOKEN=... make local` does, against the
// fake RAGcore, then stops RAGcore and checks the degraded answers.
func TestLocalAPIWithRAGcore(t *testing.T) {
	const token = "local-test-token-5f2a"
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	fake := ragcorefake.New(ragcorefake.Options{Token: token})
	fake.LoadCorpus(c, "mobilityops-procedures")
	rc := httptest.NewServer(fake)
	defer rc.Close()
	l := startLocal(t, "KNOWLEDGE_PROVIDER=ragcore", "RAGCORE_BASE_URL="+rc.URL, "RAGCORE_TOKEN="+token, "RAGCORE_TIMEOUT_MS=400")

	type lookup struct {
		EvidenceState string `json:"evidence_state"`
		Primary       *struct {
			DocumentID     string `json:"document_id"`
			RetrievalLayer string `json:"retrieval_layer"`
		} `json:"primary"`
		Relevance struct {
			SemanticSupport bool `json:"semantic_support"`
		} `json:"relevance"`
		Retrieval struct {
			Layer string `json:"layer"`
			L1    struct {
				Status     string `json:"status"`
				Provider   string `json:"provider"`
				ErrorClass string `json:"error_class"`
				Calls      int    `json:"calls"`
			} `json:"l1"`
		} `json:"retrieval"`
		Provider string `json:"provider"`
	}
	questions := map[string]string{
		"en": "The windscreen has a crack after a stone hit it, how do I report the damage?",
		"de": "Die Windschutzscheibe hat einen Riss, wie melde ich den Schaden?",
	}
	calls := 0
	for lang, q := range questions {
		status, body := post(t, l.base+"/lookup", `{"question":"`+q+`","language":"`+lang+`"}`)
		var res lookup
		mustDecode(t, body, &res)
		if status != 200 || res.Provider != "ragcore" || res.Retrieval.Layer != "L0+L1" || res.Retrieval.L1.Status != "ok" ||
			!res.Relevance.SemanticSupport || res.Primary == nil || res.Primary.DocumentID != "damage-procedure" {
			t.Errorf("%s lookup with RAGcore up: %d %s", lang, status, body)
		}
		if res.Retrieval.L1.Calls < 1 || res.Retrieval.L1.Calls > 2 {
			t.Errorf("%s lookup made %d L1 calls", lang, res.Retrieval.L1.Calls)
		}
		calls += res.Retrieval.L1.Calls
	}
	// Every retrieve request RAGcore saw is one the lookups counted (a filtered call and, when it
	// was weak, one unfiltered call).
	if n := fake.Count(http.MethodPost, "/v1/retrieve"); n != calls {
		t.Errorf("RAGcore saw %d retrieve requests, the lookups report %d", n, calls)
	}

	// Status: 9 of the 11 English sources properly published; the two others are named, and a
	// second call within five minutes sends RAGcore nothing.
	fake.Remove("mobilityops-procedures-en", "lost-and-found")
	fake.SetVersionStatus("mobilityops-procedures-en", "ev-charging", ragcorefake.VersionProcessing)
	var st struct {
		Source        int    `json:"source_document_count"`
		DocumentCount *int   `json:"document_count"`
		State         string `json:"statistics_state"`
		Verification  struct {
			Missing []string `json:"missing"`
			Cache   struct {
				Hit bool `json:"hit"`
			} `json:"cache"`
		} `json:"verification"`
	}
	for i := range 2 {
		code, body := getBody(t, l.base+"/status?language=en")
		mustDecode(t, body, &st)
		if code != 200 || st.Source != 11 || st.DocumentCount == nil || *st.DocumentCount != 9 || st.State != "verified" ||
			strings.Join(st.Verification.Missing, ",") != "ev-charging,lost-and-found" || st.Verification.Cache.Hit != (i == 1) {
			t.Errorf("status call %d: %d %s", i+1, code, body)
		}
	}
	if n := fake.Count(http.MethodGet, "/v1/documents"); n != 11 {
		t.Errorf("RAGcore saw %d identity lookups for two status calls, want 11", n)
	}

	// Manifest sync through RAGcore: every German procedure is already published there.
	req, _ := http.NewRequest("POST", l.base+"/sync", strings.NewReader(`{"language":"de"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Actor-Id", "sync-operator")
	req.Header.Set("X-Actor-Scope", "knowledge:sync")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	syncBody, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(syncBody), `"documents":11,"uploaded":0,"unchanged":11,"failed":[]`) {
		t.Errorf("sync: %d %s", resp.StatusCode, syncBody)
	}
	if n := fake.Count(http.MethodPut, "/v1/sources/mobilityops-procedures-de/"); n != 11 {
		t.Errorf("%d uploads, want 11", n)
	}

	rc.Close()
	for lang, q := range questions {
		start := time.Now()
		status, body := post(t, l.base+"/lookup", `{"question":"`+q+`","language":"`+lang+`"}`)
		took := time.Since(start)
		var res lookup
		mustDecode(t, body, &res)
		// Nothing listens: RAGcore cannot be reached at all, so L1 is "unavailable", not "failed".
		if status != 200 || res.Retrieval.L1.Status != "unavailable" || res.Retrieval.L1.ErrorClass != "unavailable" ||
			res.Retrieval.Layer != "L0" || res.Relevance.SemanticSupport || res.Primary == nil ||
			res.Primary.DocumentID != "damage-procedure" || res.Primary.RetrievalLayer != "L0" {
			t.Errorf("%s lookup with RAGcore down: %d %s", lang, status, body)
		}
		// A generous bound tied to the timeout (ten times it, for a loaded machine under -race).
		if took > 10*400*time.Millisecond {
			t.Errorf("%s lookup took %v with RAGCORE_TIMEOUT_MS=400", lang, took)
		}
	}
	status, body := post(t, l.base+"/ask", `{"question":"How do I report windscreen damage?"}`)
	if status != 200 || !strings.Contains(string(body), `"evidence_state":"unavailable"`) || !strings.Contains(string(body), `"sources":[]`) {
		t.Errorf("ask with RAGcore down: %d %s", status, body)
	}
	req, _ = http.NewRequest("GET", l.base+"/health", nil)
	req.Header.Set("X-Actor-Id", "agent-7")
	req.Header.Set("X-Actor-Scope", "knowledge:read")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("health with RAGcore down: %d", resp.StatusCode)
	}
	if logs := l.logs.String(); strings.Contains(logs, token) || strings.Contains(logs, rc.URL) {
		t.Errorf("the logs name the token or RAGcore's address:\n%s", logs)
	}
}

func getBody(t *testing.T, url string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("X-Actor-Id", "console-1")
	req.Header.Set("X-Actor-Scope", "knowledge:read")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}
