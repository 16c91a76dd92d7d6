package ragcorefake

import (
	"cmp"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"
)

// maxBodyBytes is the largest request body accepted; larger ones get 400 payload_too_large.
const maxBodyBytes = 1 << 20

// requiredHeaders must be on every request, non-blank.
var requiredHeaders = []string{"X-RAGcore-Tenant", "X-RAGcore-Workspace", "X-Actor-Id", "X-Actor-Scope", "X-Correlation-Id"}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type errorResponse struct {
	Error errorBody `json:"error"`
}

// endpoint is one route. serve returns the status and the value to encode; the caller writes
// it, so faults can delay, replace or slow down any answer the same way.
type endpoint struct {
	name    string // key of wrongShapes and validMinimal
	method  string
	hasBody bool
	serve   func(r *http.Request, body []byte) (int, any)
}

var _ http.Handler = (*Server)(nil)

// ServeHTTP answers one request as RAGcore v1 would; see the package comment for the order of
// checks.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	authorized := s.opts.Token != "" &&
		subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+s.opts.Token)) == 1
	s.record(r, authorized, body)

	if !authorized {
		writeError(w, http.StatusUnauthorized, "unauthorized", "missing or invalid bearer token")
		return
	}
	ep, ok := s.route(r)
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "no such endpoint: "+r.URL.Path)
		return
	}
	if r.Method != ep.method {
		// The contract's statuses have no 405: a method the path does not take is no endpoint.
		writeError(w, http.StatusNotFound, "not_found", "no such endpoint: "+r.Method+" "+r.URL.Path)
		return
	}
	for _, h := range requiredHeaders {
		if strings.TrimSpace(r.Header.Get(h)) == "" {
			writeError(w, http.StatusBadRequest, "missing_header", "header "+h+" is required")
			return
		}
	}
	if r.Header.Get("X-RAGcore-Tenant") != s.opts.Tenant || r.Header.Get("X-RAGcore-Workspace") != s.opts.Workspace {
		writeError(w, http.StatusForbidden, "forbidden", "this token has no access to that tenant and workspace")
		return
	}
	if readErr != nil {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](readErr); tooLarge {
			writeError(w, http.StatusBadRequest, "payload_too_large", fmt.Sprintf("request body exceeds %d bytes", maxBodyBytes))
		}
		// Otherwise the client went away while sending; nobody is left to answer.
		return
	}
	if ep.hasBody {
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			writeError(w, http.StatusBadRequest, "unsupported_media_type", "Content-Type must be application/json")
			return
		}
	}

	s.mu.Lock()
	p := s.planLocked(r.URL.Path)
	s.mu.Unlock()
	if p.latency > 0 && !sleep(r.Context(), p.latency) {
		return
	}
	switch {
	case p.status != 0:
		if p.retryAfter != "" {
			w.Header().Set("Retry-After", p.retryAfter)
		}
		writeJSON(w, p.status, injectedError(p.status))
	case p.malformed:
		setJSONHeaders(w, len(malformedBody))
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, malformedBody)
	case p.wrongShape:
		body := wrongShapes[ep.name]
		setJSONHeaders(w, len(body))
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, body)
	case p.hugeBody > 0:
		writeHuge(w, ep.name, p.hugeBody)
	default:
		status, v := ep.serve(r, body)
		if p.slowBody > 0 {
			writeSlow(w, r, status, marshal(v), p.slowBody)
			return
		}
		writeJSON(w, status, v)
	}
}

func (s *Server) record(r *http.Request, authorized bool, body []byte) {
	entry := Request{
		Method:        r.Method,
		Path:          r.URL.Path,
		RawQuery:      r.URL.RawQuery,
		Tenant:        r.Header.Get("X-RAGcore-Tenant"),
		Workspace:     r.Header.Get("X-RAGcore-Workspace"),
		ActorID:       r.Header.Get("X-Actor-Id"),
		ActorScope:    r.Header.Get("X-Actor-Scope"),
		CorrelationID: r.Header.Get("X-Correlation-Id"),
		Authorized:    authorized,
	}
	if len(body) > 0 {
		var v any
		if json.Unmarshal(body, &v) == nil {
			entry.Body = v
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, entry)
}

// route finds the endpoint of r's path, whatever the method.
func (s *Server) route(r *http.Request) (endpoint, bool) {
	switch r.URL.Path {
	case "/v1/health":
		return endpoint{name: "health", method: http.MethodGet, serve: s.health}, true
	case "/v1/documents":
		return endpoint{name: "documents", method: http.MethodGet, serve: s.documents}, true
	case "/v1/retrieve":
		return endpoint{name: "retrieve", method: http.MethodPost, hasBody: true, serve: s.retrieve}, true
	case "/v1/answer":
		return endpoint{name: "answer", method: http.MethodPost, hasBody: true, serve: s.answer}, true
	}
	// Split the escaped path, so an identifier may hold an encoded "/".
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/v1/sources/")
	if !ok {
		return endpoint{}, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || parts[1] != "documents" {
		return endpoint{}, false
	}
	sourceID, err1 := url.PathUnescape(parts[0])
	externalID, err2 := url.PathUnescape(parts[2])
	if err1 != nil || err2 != nil || sourceID == "" || externalID == "" {
		return endpoint{}, false
	}
	return endpoint{name: "upload", method: http.MethodPut, hasBody: true, serve: func(r *http.Request, body []byte) (int, any) {
		return s.upload(sourceID, externalID, body)
	}}, true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b := marshal(v)
	setJSONHeaders(w, len(b))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, errorResponse{Error: errorBody{Code: code, Message: message}})
}

func invalid(err error) (int, any) {
	return http.StatusBadRequest, errorResponse{Error: errorBody{Code: "invalid_request", Message: err.Error()}}
}

// object is a decoded JSON object whose keys are exactly the contract's: encoding/json matches
// struct fields case-insensitively, which would let a misspelt client pass.
type object struct {
	fields map[string]json.RawMessage
	prefix string // "metadata." for nested objects, for messages
}

func decodeObject(raw []byte, prefix string, names ...string) (object, error) {
	o := object{prefix: prefix}
	what := strings.TrimSuffix(prefix, ".")
	if what == "" {
		what = "body"
	}
	if err := json.Unmarshal(raw, &o.fields); err != nil || o.fields == nil {
		return o, fmt.Errorf("%s must be a JSON object", what)
	}
	keys := make([]string, 0, len(o.fields))
	for k := range o.fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(names, k) {
			return o, fmt.Errorf("unknown field %q", prefix+k)
		}
	}
	return o, nil
}

// str returns a required, non-blank string field.
func (o object) str(name string) (string, error) {
	raw, ok := o.fields[name]
	if !ok {
		return "", fmt.Errorf("%s%s is required", o.prefix, name)
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("%s%s must be a string", o.prefix, name)
	}
	if strings.TrimSpace(v) == "" {
		return "", fmt.Errorf("%s%s must not be empty", o.prefix, name)
	}
	return v, nil
}

// object returns a nested object; present reports whether it was there and not null.
func (o object) object(name string, names ...string) (sub object, present bool, err error) {
	raw, ok := o.fields[name]
	if !ok || string(raw) == "null" {
		return object{}, false, nil
	}
	sub, err = decodeObject(raw, o.prefix+name+".", names...)
	return sub, true, err
}

// category reads the optional "filters": {"category"} of retrieve and answer.
func (o object) category() (string, error) {
	f, present, err := o.object("filters", "category")
	if err != nil || !present {
		return "", err
	}
	if _, ok := f.fields["category"]; !ok {
		return "", nil
	}
	return f.str("category")
}

func (s *Server) health(*http.Request, []byte) (int, any) {
	s.mu.Lock()
	status := s.faults.HealthStatus
	s.mu.Unlock()
	return http.StatusOK, map[string]string{"status": cmp.Or(status, "ok")}
}

func (s *Server) documents(r *http.Request, _ []byte) (int, any) {
	q := r.URL.Query()
	sourceID, externalID := q.Get("source_id"), q.Get("external_id")
	if sourceID == "" || externalID == "" {
		return invalid(errors.New("query parameters source_id and external_id are required"))
	}
	found := []Document{}
	s.mu.Lock()
	for _, d := range s.docs {
		if d.SourceID == sourceID && d.ExternalID == externalID {
			found = append(found, cloneDocument(d))
		}
	}
	s.mu.Unlock()
	return http.StatusOK, map[string][]Document{"documents": found}
}

// candidate is one passage as POST /v1/retrieve returns it, with its score and rank.
type candidate struct {
	Passage
	Score float64 `json:"score"`
	Rank  int     `json:"rank"`
}

type retrieveResponse struct {
	ScoreSemantics string      `json:"score_semantics"`
	Candidates     []candidate `json:"candidates"`
}

func (s *Server) retrieve(_ *http.Request, body []byte) (int, any) {
	q, err := parseRetrieve(body)
	if err != nil {
		return invalid(err)
	}
	s.mu.Lock()
	hits := s.searchLocked(q)
	s.mu.Unlock()
	out := retrieveResponse{ScoreSemantics: "cosine_similarity", Candidates: []candidate{}}
	for _, h := range hits {
		c := candidate{Passage: h.p.Passage, Score: h.score, Rank: h.rank}
		if c.Breadcrumb == nil {
			c.Breadcrumb = []string{}
		}
		out.Candidates = append(out.Candidates, c)
	}
	return http.StatusOK, out
}

func parseRetrieve(body []byte) (query, error) {
	var q query
	o, err := decodeObject(body, "", "collection", "query", "language", "top_k", "filters")
	if err != nil {
		return q, err
	}
	if q.collection, err = o.str("collection"); err != nil {
		return q, err
	}
	if q.text, err = o.str("query"); err != nil {
		return q, err
	}
	if q.language, err = o.str("language"); err != nil {
		return q, err
	}
	raw, ok := o.fields["top_k"]
	if !ok {
		return q, errors.New("top_k is required")
	}
	// Unmarshal into int rejects 2.5, 5.0, 1e2 and "5": top_k must be a JSON integer.
	if err := json.Unmarshal(raw, &q.topK); err != nil || q.topK < 1 || q.topK > 100 {
		return q, errors.New("top_k must be an integer from 1 to 100")
	}
	q.category, err = o.category()
	return q, err
}

type citation struct {
	SourceID   string `json:"source_id"`
	ExternalID string `json:"external_id"`
	Title      string `json:"title"`
	Version    string `json:"version"`
	Section    string `json:"section"`
	Excerpt    string `json:"excerpt"`
}

type answerResponse struct {
	Answer        string     `json:"answer"`
	EvidenceState string     `json:"evidence_state"`
	Citations     []citation `json:"citations"`
}

// groundedThreshold is the best score from which an answer counts as grounded.
const groundedThreshold = 0.2

// answerPassages is how many passages an answer draws on and cites.
const answerPassages = 3

func (s *Server) answer(_ *http.Request, body []byte) (int, any) {
	q, err := parseAnswer(body)
	if err != nil {
		return invalid(err)
	}
	s.mu.Lock()
	hits := s.searchLocked(q)
	s.mu.Unlock()
	if len(hits) == 0 || hits[0].score < groundedThreshold {
		return http.StatusOK, answerResponse{
			Answer:        phrase(q.language).insufficient,
			EvidenceState: "insufficient",
			Citations:     []citation{},
		}
	}
	out := answerResponse{EvidenceState: "grounded", Answer: groundedSentence(q.language, hits[0].p.Passage)}
	for _, h := range hits {
		out.Citations = append(out.Citations, citation{
			SourceID: h.p.SourceID, ExternalID: h.p.ExternalID, Title: h.p.Title,
			Version: h.p.Version, Section: h.p.Section, Excerpt: truncate(h.p.Content, 300),
		})
	}
	return http.StatusOK, out
}

func parseAnswer(body []byte) (query, error) {
	q := query{topK: answerPassages}
	o, err := decodeObject(body, "", "collection", "question", "language", "filters")
	if err != nil {
		return q, err
	}
	if q.collection, err = o.str("collection"); err != nil {
		return q, err
	}
	if q.text, err = o.str("question"); err != nil {
		return q, err
	}
	if q.language, err = o.str("language"); err != nil {
		return q, err
	}
	q.category, err = o.category()
	return q, err
}

type phrases struct {
	insufficient           string
	grounded, groundedBare string // with and without a section
}

// phrase returns the answer templates of a language; English unless it is German.
func phrase(lang string) phrases {
	if lang == "de" {
		return phrases{
			insufficient: "Die indexierten Dokumente decken diese Frage nicht ab.",
			grounded:     "Laut %q, Abschnitt %q: %s",
			groundedBare: "Laut %q: %s",
		}
	}
	return phrases{
		insufficient: "The indexed documents do not cover this question.",
		grounded:     "According to %q, section %q: %s",
		groundedBare: "According to %q: %s",
	}
}

func groundedSentence(lang string, p Passage) string {
	ph := phrase(lang)
	if p.Section == "" {
		return fmt.Sprintf(ph.groundedBare, p.Title, firstSentence(p.Content))
	}
	return fmt.Sprintf(ph.grounded, p.Title, p.Section, firstSentence(p.Content))
}

// firstSentence is the text of the first line up to the first ".", "!" or "?" that ends a
// sentence. A terminator before any letter does not count, so "1. Ask ..." is not cut at "1.".
func firstSentence(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.TrimSpace(line)
	seenLetter := false
	for i, r := range line {
		switch {
		case r == '.' || r == '!' || r == '?':
			if seenLetter && (i+1 == len(line) || line[i+1] == ' ') {
				return truncate(line[:i+1], 300)
			}
		case unicode.IsLetter(r):
			seenLetter = true
		}
	}
	return truncate(line, 300)
}

// truncate returns the first n characters (runes, not bytes) of s.
func truncate(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
