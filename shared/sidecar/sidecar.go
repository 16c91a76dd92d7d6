// Package sidecar is the disabled-by-default comparison path of lookup_knowledge: it asks an Amazon
// Bedrock knowledge base (the Retrieve API of Bedrock Agent Runtime) the same question as the main
// retrieval path and normalises the answer into Comparable results, so that the two paths can be
// put side by side without ever treating their scores as the same kind of number.
//
// The sidecar never decides a lookup. Query reports every failure as a status of its result
// (port.SidecarResult) instead of an error, has its own short deadline and sends exactly one request (SDK retries are off), so an
// enabled but broken or slow knowledge base cannot delay or break the main answer.
//
// # What the knowledge base's documents must carry
//
// The knowledge base is an S3 data source holding the corpus files at the S3 key
// procedures/<lang>/<id>.md (any prefix before "procedures/" is allowed), chunked by section, with
// these metadata attributes (the "metadataAttributes" of each file's <file>.metadata.json):
//
//	language     "en" | "de"                  filtered on: every query sends language = Query.Language
//	category     e.g. "damage"                filtered on when Query.Category is set
//	document_id  the procedure id             Comparable.DocumentID; fallback: <id> of the S3 key
//	title        the procedure title          Comparable.Title and the first half of the breadcrumb
//	section      the section heading as in the corpus, "2. Immediate actions": the breadcrumb's
//	             second half and, through knowledge.Anchor, the anchor of Comparable.Source
//	version      the procedure version        Comparable.Version
//
// Metadata values are read as strings (JSON numbers are taken by their text); other shapes count
// as absent.
package sidecar

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockagentruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockagentruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockagentruntime/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	appconfig "github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/domain"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/port"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/sidecar/sidecarconf"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/textproc"
)

// Error classes of a failed result (port's, and the sidecar's own "throttled" and
// "invalid_config").
const (
	ClassTimeout       = port.ClassTimeout      // the sidecar's deadline (or the caller's) passed
	ClassThrottled     = "throttled"            // ThrottlingException or HTTP 429; not retried
	ClassUnauthorized  = port.ClassUnauthorized // AccessDeniedException, HTTP 401 or 403
	ClassBadResponse   = port.ClassBadResponse  // a body the SDK could not decode, or a result of the wrong shape
	ClassUnavailable   = port.ClassUnavailable  // unreachable, 5xx, or any other failure
	ClassInvalidConfig = "invalid_config"       // ResourceNotFound/Validation, an unusable query, or no sidecar
	ClassCanceled      = port.ClassCanceled     // the caller's context was canceled before an answer
)

// ScoreKind labels the sidecar's scores: Bedrock's relevance score, higher is better. It has no
// numeric relation to the main path's scores (bm25, cosine similarity, fused weights).
const ScoreKind = "bedrock_relevance"

// Query limits and defaults.
const (
	DefaultTopK = 5
	MaxTopK     = 20
	// PreviewRunes is the longest Comparable.Preview, the ellipsis included.
	PreviewRunes = 200
)

// ErrInvalidOptions is wrapped by every error of New: the options cannot make a sidecar.
var ErrInvalidOptions = sidecarconf.ErrInvalid

// Options configure the sidecar. It is built only when SIDECAR_ENABLED is true.
type Options struct {
	KnowledgeBaseID string                  // BEDROCK_KNOWLEDGE_BASE_ID, required
	Endpoint        string                  // BEDROCK_ENDPOINT override (tests, VPC endpoints); empty = AWS
	Region          string                  // used when the SDK's environment names none
	Timeout         time.Duration           // the sidecar's own deadline per query (default: the configuration's DefaultSidecarTimeout)
	Credentials     aws.CredentialsProvider // optional; tests pass static credentials
	// AWSConfig is the function's AWS configuration, loaded once per cold start; nil loads the
	// SDK's default one. Its APIOptions (instrumentation) apply to the client as well.
	AWSConfig  *aws.Config
	HTTPClient *http.Client // optional (instrumentation); default one with the timeout
	// APIOptions are added to the SDK client's middleware stack: the seam for AWS SDK
	// instrumentation such as X-Ray's awsv2.AWSV2Instrumentor. Optional.
	APIOptions []func(*middleware.Stack) error
	// Log receives failures with their SDK error text, which Results never carry. Never the
	// question. Optional: nil discards.
	Log *slog.Logger
}

// Sidecar queries one Bedrock knowledge base. It is safe for concurrent use.
type Sidecar struct {
	client  *bedrockagentruntime.Client
	kbID    string
	timeout time.Duration
	log     *slog.Logger
}

// New builds the Bedrock Agent Runtime client once. It makes no network call: a knowledge base
// that does not exist shows only in the first Query (invalid_config).
func New(ctx context.Context, o Options) (*Sidecar, error) {
	if err := sidecarconf.Check(o.KnowledgeBaseID, o.Endpoint, o.Timeout); err != nil {
		return nil, err
	}
	kbID := strings.TrimSpace(o.KnowledgeBaseID)
	timeout := o.Timeout
	if timeout == 0 {
		timeout = appconfig.DefaultSidecarTimeout
	}

	var cfg aws.Config
	if o.AWSConfig != nil {
		cfg = o.AWSConfig.Copy()
		if o.Credentials != nil {
			cfg.Credentials = o.Credentials
		}
	} else {
		var load []func(*config.LoadOptions) error
		if o.Credentials != nil {
			load = append(load, config.WithCredentialsProvider(o.Credentials))
		}
		var err error
		if cfg, err = config.LoadDefaultConfig(ctx, load...); err != nil {
			return nil, fmt.Errorf("%w: load AWS configuration: %w", ErrInvalidOptions, err)
		}
	}
	if cfg.Region == "" {
		cfg.Region = strings.TrimSpace(o.Region)
	}
	if cfg.Region == "" {
		return nil, fmt.Errorf("%w: no AWS region: the environment names none and Options.Region is empty", ErrInvalidOptions)
	}
	cfg.APIOptions = append(cfg.APIOptions, o.APIOptions...)

	var httpClient aws.HTTPClient = o.HTTPClient
	if o.HTTPClient == nil {
		// The SDK's own client keeps what the environment configured (AWS_CA_BUNDLE).
		b, ok := cfg.HTTPClient.(*awshttp.BuildableClient)
		if !ok || b == nil {
			b = awshttp.NewBuildableClient()
		}
		httpClient = b.WithTimeout(timeout)
	}
	client := bedrockagentruntime.NewFromConfig(cfg, func(co *bedrockagentruntime.Options) {
		// One attempt: a throttled or failing call must fail fast, not delay the main answer.
		co.RetryMaxAttempts = 1
		co.HTTPClient = plainBodyClient{next: httpClient}
		if o.Endpoint != "" {
			co.BaseEndpoint = aws.String(o.Endpoint)
		}
	})

	log := o.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Sidecar{client: client, kbID: kbID, timeout: timeout, log: log.With("component", "sidecar")}, nil
}

// Query is one sidecar question.
type Query struct {
	Question string
	Language string // required: every query filters on it
	Category string // optional: filtered on when non-empty
	TopK     int    // default 5, at most 20
	// CorrelationID joins the sidecar's log lines to the lookup's.
	CorrelationID string
}

// Query asks the knowledge base. It never returns an error and never panics: a failure is a
// result with Status "failed" and an ErrorClass (one of the Class constants), and its details go to Options.Log only. The
// sidecar's own deadline applies on top of ctx's.
func (s *Sidecar) Query(ctx context.Context, q Query) (res port.SidecarResult) {
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			s.logger().Error("sidecar query panicked", "panic", fmt.Sprint(p))
			res = failed(ClassUnavailable)
		}
		res.LatencyMs = float64(time.Since(start).Microseconds()) / 1000
	}()
	if s == nil || s.client == nil {
		return failed(ClassInvalidConfig)
	}
	q.Language = strings.TrimSpace(q.Language)
	q.Category = strings.TrimSpace(q.Category)
	if strings.TrimSpace(q.Question) == "" || q.Language == "" {
		// Nothing to send: a blank question or an unfiltered language would be a different query.
		s.log.WarnContext(ctx, "sidecar query not sent", "correlation_id", q.CorrelationID, "error_class", ClassInvalidConfig,
			"reason", "blank question or language")
		return failed(ClassInvalidConfig)
	}
	topK := q.TopK
	switch {
	case topK <= 0:
		topK = DefaultTopK
	case topK > MaxTopK:
		topK = MaxTopK
	}

	qctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	out, err := s.client.Retrieve(qctx, &bedrockagentruntime.RetrieveInput{
		KnowledgeBaseId: aws.String(s.kbID),
		RetrievalQuery:  &types.KnowledgeBaseQuery{Text: aws.String(q.Question)},
		RetrievalConfiguration: &types.KnowledgeBaseRetrievalConfiguration{
			VectorSearchConfiguration: &types.KnowledgeBaseVectorSearchConfiguration{
				NumberOfResults: aws.Int32(int32(topK)),
				Filter:          filterFor(q.Language, q.Category),
			},
		},
	})
	if err != nil {
		class := classify(qctx, err)
		attrs := []any{"correlation_id", q.CorrelationID, "error_class", class,
			"latency_ms", float64(time.Since(start).Microseconds()) / 1000}
		// The SDK's message names the endpoint's host and the resolver's address: log the HTTP
		// status and the request id AWS support can trace instead.
		var re *awshttp.ResponseError
		if errors.As(err, &re) {
			attrs = append(attrs, "http_status", re.HTTPStatusCode(), "aws_request_id", re.ServiceRequestID())
		}
		s.log.WarnContext(ctx, "sidecar query failed", attrs...)
		return failed(class)
	}
	results, err := mapResults(q.Language, out.RetrievalResults, topK)
	if err != nil {
		s.log.WarnContext(ctx, "sidecar query failed", "correlation_id", q.CorrelationID, "error_class", ClassBadResponse,
			"error", err.Error())
		return failed(ClassBadResponse)
	}
	res = port.SidecarResult{Status: domain.SidecarOK, ScoreKind: ScoreKind, Results: results}
	if len(results) == 0 {
		res.Status = domain.SidecarEmpty
	}
	return res
}

func (s *Sidecar) logger() *slog.Logger {
	if s == nil || s.log == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return s.log
}

// plainBodyClient hands net/http the SDK's request body without its WriterTo method. The SDK
// closes the body as soon as the round trip returns, and a closed body's WriteTo reports io.EOF;
// net/http's final "is there more?" copy of a request body treats that as a write error and
// closes the connection, cutting off a response still being read. An answer that arrives within
// microseconds of the request hits this (seen against the loopback fake); with plain Read, a
// closed body reads as an ordinary end of body.
type plainBodyClient struct{ next aws.HTTPClient }

func (c plainBodyClient) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = plainBody{req.Body}
	}
	return c.next.Do(req)
}

// plainBody is an io.ReadCloser and nothing else.
type plainBody struct{ rc io.ReadCloser }

func (b plainBody) Read(p []byte) (int, error) { return b.rc.Read(p) }
func (b plainBody) Close() error               { return b.rc.Close() }

func failed(class string) port.SidecarResult {
	return port.SidecarResult{Status: domain.SidecarFailed, ErrorClass: class, ScoreKind: ScoreKind, Results: []port.Comparable{}}
}

// filterFor is language = lang, and category = category when one is given (andAll of both).
func filterFor(lang, category string) types.RetrievalFilter {
	language := equals("language", lang)
	if category == "" {
		return language
	}
	return &types.RetrievalFilterMemberAndAll{Value: []types.RetrievalFilter{language, equals("category", category)}}
}

func equals(key, value string) types.RetrievalFilter {
	return &types.RetrievalFilterMemberEquals{Value: types.FilterAttribute{
		Key: aws.String(key), Value: document.NewLazyDocument(value),
	}}
}

// sourceURIKey is the metadata attribute in which Bedrock itself reports a chunk's source.
const sourceURIKey = "x-amz-bedrock-kb-source-uri"

// mapResults turns Bedrock's results into Comparables, ranked from 1 in the order returned. A
// result without text content or without a finite score is a wrong shape: the whole answer is
// then a bad_response rather than a list with invented values. At most topK results are kept.
func mapResults(lang string, in []types.KnowledgeBaseRetrievalResult, topK int) ([]port.Comparable, error) {
	out := make([]port.Comparable, 0, min(len(in), topK))
	for i, r := range in {
		if len(out) == topK {
			break
		}
		if r.Content == nil || r.Content.Text == nil {
			return nil, fmt.Errorf("result %d has no text content", i+1)
		}
		if r.Score == nil || math.IsNaN(*r.Score) || math.IsInf(*r.Score, 0) {
			return nil, fmt.Errorf("result %d has no finite score", i+1)
		}
		out = append(out, comparable(lang, r, len(out)+1))
	}
	return out, nil
}

func comparable(queryLang string, r types.KnowledgeBaseRetrievalResult, rank int) port.Comparable {
	md := func(key string) string { return metadataString(r.Metadata, key) }
	uri := locationURI(r.Location)
	if uri == "" {
		uri = md(sourceURIKey)
	}
	keyLang, keyID := procedureKey(uri)

	docID := md("document_id")
	if !plainSegment(docID) {
		docID = keyID
	}
	lang := md("language")
	if !plainSegment(lang) {
		lang = cmp.Or(keyLang, queryLang)
	}
	title, section := md("title"), md("section")

	c := port.Comparable{
		Source:     uri,
		DocumentID: docID,
		Title:      title,
		Breadcrumb: knowledge.Breadcrumb(title, section),
		Category:   md("category"),
		Version:    md("version"),
		Rank:       rank,
		Preview:    preview(*r.Content.Text),
		Score:      port.Score{Value: *r.Score, Kind: ScoreKind, HigherIsBetter: true},
	}
	if docID != "" && plainSegment(lang) {
		c.Source = knowledge.DocumentPath(lang, docID)
		if anchor := knowledge.Anchor(section); anchor != "" {
			c.Source = knowledge.SectionSource(c.Source, anchor)
		}
	}
	return c
}

// metadataString is a metadata value as a string: JSON strings as they are, numbers by their text.
func metadataString(md map[string]document.Interface, key string) string {
	v, ok := md[key]
	if !ok || v == nil {
		return ""
	}
	var s string
	if err := v.UnmarshalSmithyDocument(&s); err != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

func locationURI(l *types.RetrievalResultLocation) string {
	if l == nil {
		return ""
	}
	switch {
	case l.S3Location != nil && l.S3Location.Uri != nil:
		return *l.S3Location.Uri
	case l.WebLocation != nil && l.WebLocation.Url != nil:
		return *l.WebLocation.Url
	case l.CustomDocumentLocation != nil && l.CustomDocumentLocation.Id != nil:
		return *l.CustomDocumentLocation.Id
	}
	return ""
}

// procedureKey reads <lang> and <id> from a location ending in procedures/<lang>/<id>.md, e.g.
// "s3://bucket/kb/procedures/en/damage-procedure.md"; empty strings otherwise.
func procedureKey(uri string) (lang, id string) {
	if u, err := url.Parse(uri); err == nil && u.Path != "" {
		uri = u.Path
	}
	dir, file := path.Split(uri)
	dir, lang = path.Split(strings.TrimSuffix(dir, "/"))
	if path.Base(dir) != "procedures" || path.Ext(file) != ".md" {
		return "", ""
	}
	id = strings.TrimSuffix(file, ".md")
	if !plainSegment(lang) || !plainSegment(id) {
		return "", ""
	}
	return lang, id
}

// plainSegment reports whether s can stand as one segment of "procedures/<lang>/<id>.md#...":
// letters, digits, '-', '_' and '.', and not "." or "..".
func plainSegment(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 128 {
		return false
	}
	for _, r := range s {
		ok := 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return false
		}
	}
	return true
}

// preview is text with its whitespace runs folded to single spaces, cut to at most PreviewRunes
// runes; a cut ends in "…" (which counts towards the limit).
func preview(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	cut := textproc.Clip(text, PreviewRunes)
	if cut == text {
		return text
	}
	// No space before the ellipsis.
	return strings.TrimRight(strings.TrimSuffix(cut, "…"), " ") + "…"
}
