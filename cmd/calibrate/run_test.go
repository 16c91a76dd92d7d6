package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ragcorefake"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/testutil"
)

const sample = "testdata/sample.jsonl"

// smallGrid keeps the end-to-end runs short: 9 grounded thresholds, 5 supported gaps.
var smallGrid = []string{"-grounded", "0.40:0.80:0.05"}

// env is a getenv over a fixed environment.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// fixture counts the sample's questions: all, answerable and negatives.
func fixture(t *testing.T) (all, answerable, negatives int) {
	t.Helper()
	f, err := os.Open(sample)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			Expect *string `json:"expect"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		all++
		if r.Expect == nil {
			negatives++
		} else {
			answerable++
		}
	}
	if answerable == 0 || negatives == 0 {
		t.Fatalf("the sample needs answerable questions and negatives (%d, %d)", answerable, negatives)
	}
	return all, answerable, negatives
}

// startRAGcore serves the fake RAGcore with the embedded corpus published; wrap, when set, sits
// in front of it.
func startRAGcore(t *testing.T, token string, wrap func(http.Handler) http.Handler) (*ragcorefake.Server, *httptest.Server) {
	t.Helper()
	return testutil.ServeRAGcore(t, token, wrap)
}

func runJSON(t *testing.T, getenv func(string) string, args ...string) report {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), append([]string{"-json"}, args...), getenv, &out, &errOut); err != nil {
		t.Fatalf("run: %v (stderr %s)", err, errOut.String())
	}
	var rep report
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("the -json output does not decode: %v", err)
	}
	return rep
}

// checkRow checks a row's arithmetic against its own counts and the questions measured.
func checkRow(t *testing.T, what string, r rowOut, answerable, negatives int) {
	t.Helper()
	if r.Answerable != answerable || r.Negatives != negatives || r.N != answerable+negatives {
		t.Errorf("%s: %d answerable, %d negatives, n %d; measured %d and %d", what, r.Answerable, r.Negatives, r.N, answerable, negatives)
	}
	if r.Right+r.Wrong > r.Answerable || r.NegativesGrounded > r.Negatives || r.Right < 0 || r.Wrong < 0 || r.NegativesGrounded < 0 {
		t.Errorf("%s: impossible counts %+v", what, r.counts)
	}
	near := func(name string, got *float64, a, b int) {
		if b == 0 {
			if got != nil {
				t.Errorf("%s: %s %v of nothing, want null", what, name, *got)
			}
			return
		}
		if want := float64(a) / float64(b); got == nil || math.Abs(*got-want) > 1e-4 {
			t.Errorf("%s: %s %v, want %d/%d", what, name, got, a, b)
		}
	}
	near("precision", r.Precision, r.Right, r.Right+r.Wrong+r.NegativesGrounded)
	near("recall", r.Recall, r.Right, r.Answerable)
	near("wrong-grounded", r.WrongRate, r.Wrong, r.Answerable)
	near("negatives grounded", r.NegativesRate, r.NegativesGrounded, r.Negatives)
}

// TestRunAgainstRAGcore runs the command as `make calibrate` runs it against a real RAGcore: the
// provider from the environment, here the fake RAGcore over HTTP.
func TestRunAgainstRAGcore(t *testing.T) {
	t.Parallel()
	const token = "calibrate-test-token"
	fake, srv := startRAGcore(t, token, nil)
	all, answerable, negatives := fixture(t)
	getenv := env("KNOWLEDGE_PROVIDER", "ragcore", "RAGCORE_BASE_URL", srv.URL, "RAGCORE_TOKEN", token,
		"L1_GROUNDED_COSINE", "0.72", "L1_SUPPORTED_COSINE", "0.61")
	rep := runJSON(t, getenv, append(smallGrid, "-holdout", sample, sample)...)

	if rep.Provider != "ragcore" || rep.ScoreKind != "cosine_similarity" || !rep.ThresholdsApply || rep.Note != "" {
		t.Fatalf("provider %s (%s), thresholds apply %v, note %q", rep.Provider, rep.ScoreKind, rep.ThresholdsApply, rep.Note)
	}
	if rep.Questions != all || rep.Failed != 0 || len(rep.Sets) != 2 || rep.Sets[0].Answerable != answerable ||
		rep.Sets[0].Negatives != negatives || rep.Sets[0].Holdout || !rep.Sets[1].Holdout {
		t.Errorf("questions %d (failed %d), sets %+v; the sample has %d: %d answerable, %d negatives",
			rep.Questions, rep.Failed, rep.Sets, all, answerable, negatives)
	}
	// 9 grounded thresholds with 5 gaps (0.40 - 0.20 stays above 0), and the configured pair,
	// which is not one of them.
	if rep.Pairs != 9*5+1 {
		t.Errorf("%d pairs, want %d", rep.Pairs, 9*5+1)
	}
	// The configuration's thresholds are the configured row's.
	if c := rep.Configured; c.Grounded == nil || *c.Grounded != 0.72 || *c.Supported != 0.61 {
		t.Errorf("configured row %v/%v, want the environment's 0.72/0.61", c.Grounded, c.Supported)
	}
	checkRow(t, "configured", rep.Configured, answerable, negatives)

	marked := map[string]int{}
	for _, r := range rep.Rows {
		what := "row " + pair{*r.Grounded, *r.Supported}.String()
		checkRow(t, what, r, answerable, negatives)
		for _, m := range r.Marks {
			marked[m]++
		}
		// No row shown beats the recommendation within the limits.
		if rep.Recommended != nil && rep.Limits.meets(r.counts) && r.Right > rep.Recommended.Right {
			t.Errorf("%s has more right-grounded (%d) within the limits than the recommendation (%d)", what, r.Right, rep.Recommended.Right)
		}
	}
	// The thresholds change the verdict: the rows do not all come out the same.
	distinct := map[counts]bool{}
	for _, r := range rep.Rows {
		distinct[r.counts] = true
	}
	if len(distinct) < 2 {
		t.Errorf("every pair of the grid gave the same counts %v: the thresholds did not reach the verdict", rep.Configured.counts)
	}
	if marked["configured"] != 1 {
		t.Errorf("%d rows marked configured, want 1", marked["configured"])
	}
	switch {
	case rep.Recommended != nil:
		if marked["recommended"] != 1 || !rep.Limits.meets(rep.Recommended.counts) || rep.Safest != nil {
			t.Errorf("recommended %+v (rows marked %d, safest %v) is not within the limits %+v", rep.Recommended, marked["recommended"], rep.Safest, rep.Limits)
		}
		checkRow(t, "recommended", *rep.Recommended, answerable, negatives)
	case rep.Safest == nil:
		t.Error("neither a recommendation nor the safest pair")
	}

	// The holdout is the same sample: at the configured and the recommended pairs it must come
	// out exactly as the questions chosen on, lookup for lookup.
	h := rep.Holdout
	if h == nil || h.Questions != all || h.Configured.counts != rep.Configured.counts {
		t.Fatalf("holdout %+v, want the configured row's counts %+v", h, rep.Configured.counts)
	}
	if rep.Recommended != nil && (h.Recommended == nil || h.Recommended.counts != rep.Recommended.counts) {
		t.Errorf("holdout at the recommended pair %+v, want %+v", h.Recommended, rep.Recommended.counts)
	}

	// Each distinct query reached RAGcore once, however many pairs judged it: at least one per
	// question, at most a filtered and an unfiltered one per question.
	got := int64(fake.Count(http.MethodPost, "/v1/retrieve"))
	if got != rep.ProviderCalls || got < int64(all) || got > int64(2*all) {
		t.Errorf("RAGcore saw %d retrieve requests, the report says %d, for %d questions at %d pairs", got, rep.ProviderCalls, all, rep.Pairs)
	}
	// Read-only: nothing but retrieval reached RAGcore.
	for _, r := range fake.Requests() {
		if r.Method != http.MethodPost || r.Path != "/v1/retrieve" {
			t.Errorf("calibration sent %s %s", r.Method, r.Path)
		}
	}
}

// TestRunFakeText runs `make calibrate`'s default, -fake, and reads the text report.
func TestRunFakeText(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	// The thresholds come from the environment, as the functions read them; -fake changes only
	// the provider.
	getenv := env("L1_GROUNDED_COSINE", "0.65", "L1_SUPPORTED_COSINE", "0.55")
	if err := run(context.Background(), append([]string{"-fake"}, append(smallGrid, sample)...), getenv, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	all, answerable, negatives := fixture(t)
	for _, want := range []string{
		"provider ragcore (cosine_similarity); " + strconv.Itoa(all) + " questions from 1 set: " + strconv.Itoa(answerable) + " answerable, " + strconv.Itoa(negatives),
		"grid: L1_GROUNDED_COSINE 0.40:0.80:0.05, L1_SUPPORTED_COSINE 0.00:0.20:0.05 below it: 45 pairs",
		"grounded  supported  precision  recall  wrong-grounded  negatives grounded  n",
		"rule: of the pairs whose wrong-grounded rate is at most 3.0 %",
		"recommended: ",
		"provider calls: ",
	} {
		if !strings.Contains(squeeze(text), squeeze(want)) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	// The configured row: the environment's 0.65 and 0.55 (a pair of the grid, so not measured
	// twice), with the question count.
	configured := false
	for line := range strings.Lines(text) {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "0.65" && f[1] == "0.55" && strings.HasSuffix(strings.TrimSpace(line), "configured") {
			configured = strings.Contains(line, " "+strconv.Itoa(all)+" ")
		}
	}
	if !configured {
		t.Errorf("no configured row 0.65/0.55 over %d questions:\n%s", all, text)
	}
}

// TestRunDemo: without RAGcore the cosine thresholds do not apply, and the report says so.
func TestRunDemo(t *testing.T) {
	t.Parallel()
	_, answerable, negatives := fixture(t)
	rep := runJSON(t, env(), append(smallGrid, sample)...)
	if rep.Provider != "demo" || rep.ThresholdsApply || rep.Pairs != 1 || len(rep.Rows) != 1 || rep.Recommended != nil ||
		!strings.Contains(rep.Note, "do not apply") {
		t.Fatalf("demo report: provider %s, thresholds apply %v, %d pairs, %d rows, recommended %v, note %q",
			rep.Provider, rep.ThresholdsApply, rep.Pairs, len(rep.Rows), rep.Recommended, rep.Note)
	}
	if rep.Rows[0].Grounded != nil {
		t.Errorf("the demo row names thresholds %v", *rep.Rows[0].Grounded)
	}
	checkRow(t, "demo", rep.Rows[0], answerable, negatives)
}

// TestRunProviderErrors: a question whose retrieval fails is counted and left out of every pair;
// the run fails only when every question's did.
func TestRunProviderErrors(t *testing.T) {
	t.Parallel()
	const token = "calibrate-test-token"
	// RAGcore refuses the retrievals of the questions about a wallet, and only those.
	_, srv := startRAGcore(t, token, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if r.URL.Path == "/v1/retrieve" && bytes.Contains(body, []byte("wallet")) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(w, `{"error":{"code":"invalid_request","message":"refused"}}`)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
		})
	})
	all, answerable, negatives := fixture(t)
	raw, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	wallet := strings.Count(string(raw), "wallet")
	if wallet == 0 {
		t.Fatal("the sample has no question about a wallet")
	}
	getenv := env("KNOWLEDGE_PROVIDER", "ragcore", "RAGCORE_BASE_URL", srv.URL, "RAGCORE_TOKEN", token,
		"RAGCORE_BREAKER_FAILURES", "1000")
	rep := runJSON(t, getenv, append(smallGrid, sample)...)
	if rep.Questions != all || rep.Failed != wallet || rep.ErrorClasses == "" {
		t.Fatalf("%d questions, %d failed (%s); want %d failed", rep.Questions, rep.Failed, rep.ErrorClasses, wallet)
	}
	// The wallet questions expect a procedure: the rows count the others.
	for _, r := range append(rep.Rows, rep.Configured) {
		checkRow(t, "row", r, answerable-wallet, negatives)
	}

	// Every retrieval timing out: each lookup ends at its deadline, and the run fails saying why.
	fake, slow := startRAGcore(t, token, nil)
	fake.SetFaults(ragcorefake.Faults{Latency: 5 * time.Second, Paths: []string{"/v1/retrieve"}})
	getenv = env("KNOWLEDGE_PROVIDER", "ragcore", "RAGCORE_BASE_URL", slow.URL, "RAGCORE_TOKEN", token,
		"RAGCORE_TIMEOUT_MS", "100")
	err = run(context.Background(), append(smallGrid, sample), getenv, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "failed every question's retrieval") {
		t.Errorf("run with RAGcore timing out: %v", err)
	}
}

// squeeze collapses runs of spaces, so that a table's alignment does not matter.
func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }
