package ragcorefake

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
)

// Document statuses of the contract.
const (
	StatusActive   = "active"
	StatusArchived = "archived"
	StatusDeleted  = "deleted"
)

// Version statuses of the contract.
const (
	VersionPublished  = "published"
	VersionProcessing = "processing"
	VersionFailed     = "failed"
)

// Options configure a Server.
type Options struct {
	// Token is the bearer token every request must carry. Empty rejects every request.
	Token string
	// Tenant, Workspace and Collection are the namespace this server serves.
	Tenant, Workspace, Collection string
	// PublishUploads makes uploaded versions "published" at once instead of "processing".
	PublishUploads bool
	// Seed drives the random source behind Faults.ErrorRate, so failures repeat run after run.
	Seed int64
}

// Document is one document as GET /v1/documents returns it.
type Document struct {
	DocumentID    string   `json:"document_id"`
	SourceID      string   `json:"source_id"`
	ExternalID    string   `json:"external_id"`
	Tenant        string   `json:"tenant"`
	Workspace     string   `json:"workspace"`
	Collection    string   `json:"collection"`
	Status        string   `json:"status"`
	ActiveVersion *Version `json:"active_version"`
	Metadata      Metadata `json:"metadata"`
}

// Version is a document's active version.
type Version struct {
	Version       string `json:"version"`
	Status        string `json:"status"`
	ContentSHA256 string `json:"content_sha256"`
	PublishedAt   string `json:"published_at,omitempty"`
}

// Metadata is the document metadata the identity lookup reports.
type Metadata struct {
	Language      string `json:"language"`
	Category      string `json:"category"`
	EffectiveDate string `json:"effective_date"`
}

// Passage is one retrievable chunk. Empty Tenant, Workspace and Collection mean the server's.
// Its JSON form is the passage part of a POST /v1/retrieve candidate: the language and the
// namespace, which the request names, stay out of it.
type Passage struct {
	SourceID   string   `json:"source_id"`
	ExternalID string   `json:"external_id"`
	DocumentID string   `json:"document_id"`
	Version    string   `json:"version"`
	Title      string   `json:"title"`
	Breadcrumb []string `json:"breadcrumb"`
	Section    string   `json:"section"`
	Category   string   `json:"category"`
	Language   string   `json:"-"`
	Content    string   `json:"content"`
	Tenant     string   `json:"-"`
	Workspace  string   `json:"-"`
	Collection string   `json:"-"`
}

// Request is one logged request. It never holds the token, only whether it was right.
type Request struct {
	Method        string
	Path          string
	RawQuery      string
	Tenant        string // X-RAGcore-Tenant
	Workspace     string // X-RAGcore-Workspace
	ActorID       string // X-Actor-Id
	ActorScope    string // X-Actor-Scope
	CorrelationID string // X-Correlation-Id
	Authorized    bool
	// Body is the request body decoded into any, or nil when there was none or it was not JSON.
	Body any
}

// Server is the fake RAGcore. It implements http.Handler and is safe for concurrent use.
type Server struct {
	opts Options // read-only after New

	mu       sync.Mutex
	docs     []Document // insertion order is the order the lookup reports
	passages []indexedPassage
	nextID   int
	faults   Faults
	failNext int // what is left of faults.FailNext
	rng      *rand.Rand
	log      []Request
}

// indexedPassage keeps the word vector next to the passage so a query costs no re-tokenising.
type indexedPassage struct {
	Passage
	vec vector
}

// New returns an empty server for o's namespace; what Options leaves empty is the configuration's
// default namespace.
func New(o Options) *Server {
	o.Tenant = cmp.Or(o.Tenant, config.DefaultTenant)
	o.Workspace = cmp.Or(o.Workspace, config.DefaultWorkspace)
	o.Collection = cmp.Or(o.Collection, config.DefaultCollection)
	return &Server{
		opts: o,
		rng:  rand.New(rand.NewPCG(uint64(o.Seed), 0x5eed)),
	}
}

// AddDocument stores d as the lookup will report it. Empty DocumentID gets a fresh "rc-doc-<n>"
// and empty namespace fields get the server's; anything else is kept as given, so scenarios can
// store duplicates, other namespaces and invalid states.
func (s *Server) AddDocument(d Document) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addDocumentLocked(d)
}

func (s *Server) addDocumentLocked(d Document) Document {
	if d.DocumentID == "" {
		s.nextID++
		d.DocumentID = "rc-doc-" + strconv.Itoa(s.nextID)
	}
	d.Tenant = cmp.Or(d.Tenant, s.opts.Tenant)
	d.Workspace = cmp.Or(d.Workspace, s.opts.Workspace)
	d.Collection = cmp.Or(d.Collection, s.opts.Collection)
	d = cloneDocument(d)
	s.docs = append(s.docs, d)
	return d
}

// AddPassage stores one retrievable chunk.
func (s *Server) AddPassage(p Passage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addPassageLocked(p)
}

func (s *Server) addPassageLocked(p Passage) {
	p.Tenant = cmp.Or(p.Tenant, s.opts.Tenant)
	p.Workspace = cmp.Or(p.Workspace, s.opts.Workspace)
	p.Collection = cmp.Or(p.Collection, s.opts.Collection)
	p.Breadcrumb = append([]string(nil), p.Breadcrumb...)
	s.passages = append(s.passages, indexedPassage{Passage: p, vec: newVector(p.Title + " " + p.Section + " " + p.Content)})
}

// LoadCorpus indexes every procedure of c as RAGcore would after a complete sync: one active,
// published document per procedure and language (source_id sourcePrefix+"-"+language,
// external_id the procedure id) and one passage per section. skip lists "<lang>/<id>" procedures
// to leave out, to simulate documents that never reached RAGcore.
func (s *Server) LoadCorpus(c *knowledge.Corpus, sourcePrefix string, skip ...string) {
	skipped := map[string]bool{}
	for _, k := range skip {
		skipped[k] = true
	}
	published := now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, lang := range knowledge.Languages {
		for _, kd := range c.Documents(lang) {
			if skipped[lang+"/"+kd.ID] {
				continue
			}
			d := s.addDocumentLocked(Document{
				SourceID:   sourcePrefix + "-" + lang,
				ExternalID: kd.ID,
				Status:     StatusActive,
				ActiveVersion: &Version{
					Version:       kd.Version,
					Status:        VersionPublished,
					ContentSHA256: artifactHash(string(kd.Raw)),
					PublishedAt:   published,
				},
				Metadata: Metadata{Language: kd.Language, Category: kd.Category, EffectiveDate: kd.EffectiveDate},
			})
			for _, sec := range kd.Sections {
				s.addPassageLocked(Passage{
					SourceID: d.SourceID, ExternalID: d.ExternalID, DocumentID: d.DocumentID,
					Version: kd.Version, Title: kd.Title, Breadcrumb: []string{kd.Title, sec.Heading},
					Section: sec.Heading, Category: kd.Category, Language: kd.Language, Content: sec.Content,
				})
			}
		}
	}
}

// artifactHash stands for the hash of RAGcore's parsed artifact. It deliberately differs from
// the hash of the uploaded bytes, so a client that compares the two is caught.
func artifactHash(content string) string {
	sum := sha256.Sum256([]byte("parsed:" + content))
	return hex.EncodeToString(sum[:])
}

func now() string { return time.Now().UTC().Format(time.RFC3339) }

// SetDocumentStatus sets the status (StatusArchived, StatusDeleted, ...) of every document with
// that identity, in any namespace. An unknown identity changes nothing.
func (s *Server) SetDocumentStatus(sourceID, externalID, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.docs {
		if s.docs[i].SourceID == sourceID && s.docs[i].ExternalID == externalID {
			s.docs[i].Status = status
		}
	}
}

// SetVersionStatus sets the active version's status (VersionProcessing, VersionFailed,
// VersionPublished) of every document with that identity that has one; published_at follows.
// An empty status removes the active version, so the lookup reports "active_version": null.
func (s *Server) SetVersionStatus(sourceID, externalID, status string) {
	published := now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.docs {
		d := &s.docs[i]
		if d.SourceID != sourceID || d.ExternalID != externalID || d.ActiveVersion == nil {
			continue
		}
		if status == "" {
			d.ActiveVersion = nil
			continue
		}
		d.ActiveVersion.Status = status
		switch {
		case status != VersionPublished:
			d.ActiveVersion.PublishedAt = ""
		case d.ActiveVersion.PublishedAt == "":
			d.ActiveVersion.PublishedAt = published
		}
	}
}

// Remove deletes every document with that identity, in any namespace, and its passages: the
// document is missing from RAGcore.
func (s *Server) Remove(sourceID, externalID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.docs = slices.DeleteFunc(s.docs, func(d Document) bool {
		return d.SourceID == sourceID && d.ExternalID == externalID
	})
	s.passages = slices.DeleteFunc(s.passages, func(p indexedPassage) bool {
		return p.SourceID == sourceID && p.ExternalID == externalID
	})
}

// Duplicate adds a second active document with a published version and the same identity and
// namespace as the first document with that identity, under a new document_id.
func (s *Server) Duplicate(sourceID, externalID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.docs {
		if d.SourceID != sourceID || d.ExternalID != externalID {
			continue
		}
		d = cloneDocument(d)
		d.DocumentID = ""
		d.Status = StatusActive
		if d.ActiveVersion == nil {
			d.ActiveVersion = &Version{Version: "1", ContentSHA256: artifactHash(externalID)}
		}
		if d.ActiveVersion.Status != VersionPublished {
			d.ActiveVersion.Status = VersionPublished
			d.ActiveVersion.PublishedAt = now()
		}
		s.addDocumentLocked(d)
		return
	}
}

// MoveToNamespace moves every document with that identity, and its passages, to another
// tenant, workspace and collection.
func (s *Server) MoveToNamespace(sourceID, externalID, tenant, workspace, collection string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.docs {
		d := &s.docs[i]
		if d.SourceID == sourceID && d.ExternalID == externalID {
			d.Tenant, d.Workspace, d.Collection = tenant, workspace, collection
		}
	}
	for i := range s.passages {
		p := &s.passages[i]
		if p.SourceID == sourceID && p.ExternalID == externalID {
			p.Tenant, p.Workspace, p.Collection = tenant, workspace, collection
		}
	}
}

// SetFaults replaces the injected faults; FailNext starts counting afresh.
func (s *Server) SetFaults(f Faults) {
	f.Paths = append([]string(nil), f.Paths...)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
	s.failNext = f.FailNext
}

// Requests returns a copy of the request log, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// Count returns how many logged requests had that method ("" for any) and a path starting with
// pathPrefix.
func (s *Server) Count(method, pathPrefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.log {
		if (method == "" || r.Method == method) && strings.HasPrefix(r.Path, pathPrefix) {
			n++
		}
	}
	return n
}

// Reset clears the request log; documents, passages and faults stay.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = nil
}

// cloneDocument copies the version so no caller shares memory with the store.
func cloneDocument(d Document) Document {
	if d.ActiveVersion != nil {
		v := *d.ActiveVersion
		d.ActiveVersion = &v
	}
	return d
}
