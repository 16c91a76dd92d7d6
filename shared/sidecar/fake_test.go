package sidecar

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
)

// fakeBedrock implements the Bedrock Agent Runtime Retrieve operation as the Go SDK calls it
// (restJson1: POST /knowledgebases/{knowledgeBaseId}/retrieve, SigV4 with the signing name
// "bedrock", a JSON body, JSON errors named by the X-Amzn-ErrorType header). It answers from a
// store of chunks, applying the metadata filter (equals, andAll) and numberOfResults as the service
// does; respond, when set, replaces the answer (faults, raw bodies).
type fakeBedrock struct {
	srv    *httptest.Server
	kbID   string
	chunks []chunk

	mu       sync.Mutex
	requests []request
	respond  func(w http.ResponseWriter, r *http.Request)
}

// chunk is one stored chunk: its text, S3 URI and metadata attributes.
type chunk struct {
	Text     string
	URI      string
	Metadata map[string]any
}

// request is what the fake received.
type request struct {
	KnowledgeBaseID string
	Auth            string
	ContentType     string
	Body            []byte
	Text            string
	NumberOfResults int
	Filter          json.RawMessage // exactly as sent
}

// retrieveBody is the request body of Retrieve. Unknown fields are refused, as the service does.
type retrieveBody struct {
	RetrievalQuery struct {
		Text string `json:"text"`
	} `json:"retrievalQuery"`
	RetrievalConfiguration *struct {
		VectorSearchConfiguration struct {
			NumberOfResults *int            `json:"numberOfResults"`
			Filter          json.RawMessage `json:"filter"`
		} `json:"vectorSearchConfiguration"`
	} `json:"retrievalConfiguration"`
	NextToken string `json:"nextToken"`
}

const (
	testKB     = "KBTEST0001"
	testRegion = "eu-central-1"
	testKeyID  = "AKIDSIDECARTEST"
)

var authPattern = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=` + testKeyID +
	`/[0-9]{8}/[a-z0-9-]+/bedrock/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$`)

func newFake(t *testing.T, chunks ...chunk) *fakeBedrock {
	t.Helper()
	f := &fakeBedrock{kbID: testKB, chunks: chunks}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /knowledgebases/{kb}/retrieve", f.retrieve)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		awsError(w, http.StatusNotFound, "UnknownOperationException", "no such operation")
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// setRespond replaces the fake's answers.
func (f *fakeBedrock) setRespond(h func(w http.ResponseWriter, r *http.Request)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.respond = h
}

func (f *fakeBedrock) received() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

func (f *fakeBedrock) retrieve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		awsError(w, http.StatusBadRequest, "ValidationException", "unreadable body")
		return
	}
	rec := request{KnowledgeBaseID: r.PathValue("kb"), Auth: r.Header.Get("Authorization"),
		ContentType: r.Header.Get("Content-Type"), Body: raw}
	var body retrieveBody
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	decodeErr := dec.Decode(&body)
	if decodeErr == nil {
		rec.Text = body.RetrievalQuery.Text
		if rc := body.RetrievalConfiguration; rc != nil {
			if n := rc.VectorSearchConfiguration.NumberOfResults; n != nil {
				rec.NumberOfResults = *n
			}
			rec.Filter = rc.VectorSearchConfiguration.Filter
		}
	}
	f.mu.Lock()
	f.requests = append(f.requests, rec)
	respond := f.respond
	f.mu.Unlock()

	if respond != nil {
		respond(w, r)
		return
	}
	switch {
	case !authPattern.MatchString(rec.Auth):
		awsError(w, http.StatusForbidden, "UnrecognizedClientException", "The security token included in the request is invalid.")
		return
	case rec.KnowledgeBaseID != f.kbID:
		awsError(w, http.StatusNotFound, "ResourceNotFoundException", "knowledge base "+rec.KnowledgeBaseID+" not found")
		return
	case rec.ContentType != "application/json":
		awsError(w, http.StatusBadRequest, "ValidationException", "content type "+rec.ContentType)
		return
	case decodeErr != nil:
		awsError(w, http.StatusBadRequest, "ValidationException", decodeErr.Error())
		return
	case strings.TrimSpace(rec.Text) == "":
		awsError(w, http.StatusBadRequest, "ValidationException", "retrievalQuery.text must not be empty")
		return
	}
	n := 5 // the service's default numberOfResults
	if rec.NumberOfResults != 0 {
		n = rec.NumberOfResults
	}
	if n < 1 || n > 100 {
		awsError(w, http.StatusBadRequest, "ValidationException", "numberOfResults out of range")
		return
	}
	match := func(map[string]any) bool { return true }
	if len(rec.Filter) > 0 {
		if match, err = parseFilter(rec.Filter); err != nil {
			awsError(w, http.StatusBadRequest, "ValidationException", err.Error())
			return
		}
	}
	type hit struct {
		c     chunk
		score float64
	}
	var hits []hit
	for _, c := range f.chunks {
		if match(c.Metadata) {
			hits = append(hits, hit{c, relevance(rec.Text, c.Text)})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(b.score, a.score) })
	results := []any{}
	for _, h := range hits[:min(n, len(hits))] {
		results = append(results, map[string]any{
			"content":  map[string]any{"text": h.c.Text, "type": "TEXT"},
			"location": map[string]any{"type": "S3", "s3Location": map[string]any{"uri": h.c.URI}},
			"metadata": withSourceURI(h.c.Metadata, h.c.URI),
			"score":    h.score,
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{"retrievalResults": results})
}

// parseFilter compiles a RetrievalFilter (only the two operators the sidecar uses) into a
// predicate. A union must set exactly one member; andAll needs at least two filters.
func parseFilter(raw json.RawMessage) (func(map[string]any) bool, error) {
	var union map[string]json.RawMessage
	if err := json.Unmarshal(raw, &union); err != nil || len(union) != 1 {
		return nil, fmt.Errorf("filter must set exactly one operator: %s", raw)
	}
	var op string
	var v json.RawMessage
	for k, val := range union {
		op, v = k, val
	}
	switch op {
	case "equals":
		var attr struct {
			Key   string `json:"key"`
			Value any    `json:"value"`
		}
		if err := json.Unmarshal(v, &attr); err != nil || attr.Key == "" {
			return nil, fmt.Errorf("equals needs key and value: %s", v)
		}
		return func(md map[string]any) bool { return md[attr.Key] == attr.Value }, nil
	case "andAll":
		var list []json.RawMessage
		if err := json.Unmarshal(v, &list); err != nil || len(list) < 2 {
			return nil, fmt.Errorf("andAll needs at least two filters: %s", v)
		}
		var all []func(map[string]any) bool
		for _, item := range list {
			m, err := parseFilter(item)
			if err != nil {
				return nil, err
			}
			all = append(all, m)
		}
		return func(md map[string]any) bool {
			for _, m := range all {
				if !m(md) {
					return false
				}
			}
			return true
		}, nil
	}
	return nil, fmt.Errorf("operator %q not supported by the fake", op)
}

// relevance is the fake's stand-in for Bedrock's score: the share of question words in the text.
func relevance(question, text string) float64 {
	words := strings.Fields(strings.ToLower(question))
	if len(words) == 0 {
		return 0
	}
	lower := strings.ToLower(text)
	n := 0
	for _, w := range words {
		if strings.Contains(lower, w) {
			n++
		}
	}
	return float64(n) / float64(len(words))
}

func withSourceURI(md map[string]any, uri string) map[string]any {
	out := map[string]any{"x-amz-bedrock-kb-source-uri": uri, "x-amz-bedrock-kb-data-source-id": "DSTEST0001"}
	for k, v := range md {
		out[k] = v
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Requestid", "11111111-2222-3333-4444-555555555555")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// awsError writes an AWS restJson1 error as the service does: the type in X-Amzn-ErrorType
// (with the service's namespace suffix), the message in the body.
func awsError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("X-Amzn-ErrorType", code+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	writeJSON(w, status, map[string]string{"message": message})
}

// rawBody answers every request with status and body as given.
func rawBody(status int, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// newSidecar builds a Sidecar against the fake with static credentials.
func newSidecar(t testing.TB, endpoint string, timeout time.Duration, mod ...func(*Options)) *Sidecar {
	t.Helper()
	o := Options{
		KnowledgeBaseID: testKB,
		Endpoint:        endpoint,
		Region:          testRegion,
		Timeout:         timeout,
		Credentials:     credentials.NewStaticCredentialsProvider(testKeyID, "secret-for-tests", ""),
	}
	for _, m := range mod {
		m(&o)
	}
	s, err := New(context.Background(), o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}
