package ragcorefake

import (
	"errors"
	"net/http"
	"slices"
	"time"
)

type uploadRequest struct {
	collection, content                               string
	title, version, effectiveDate, language, category string
}

type uploadResponse struct {
	DocumentID string `json:"document_id"`
	Version    string `json:"version"`
	Status     string `json:"status"`
}

func parseUpload(body []byte) (uploadRequest, error) {
	var u uploadRequest
	o, err := decodeObject(body, "", "collection", "content", "content_type", "metadata")
	if err != nil {
		return u, err
	}
	if u.collection, err = o.str("collection"); err != nil {
		return u, err
	}
	if u.content, err = o.str("content"); err != nil {
		return u, err
	}
	contentType, err := o.str("content_type")
	if err != nil {
		return u, err
	}
	if contentType != "text/markdown" {
		return u, errors.New(`content_type must be "text/markdown"`)
	}
	m, present, err := o.object("metadata", "title", "version", "effective_date", "language", "category")
	if err != nil {
		return u, err
	}
	if !present {
		return u, errors.New("metadata is required")
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{
		{"title", &u.title}, {"version", &u.version}, {"effective_date", &u.effectiveDate},
		{"language", &u.language}, {"category", &u.category},
	} {
		if *f.dst, err = m.str(f.name); err != nil {
			return u, err
		}
	}
	if _, err := time.Parse(time.DateOnly, u.effectiveDate); err != nil {
		return u, errors.New("metadata.effective_date must be a date such as 2026-03-01")
	}
	return u, nil
}

// upload stores one source: unchanged when its document in this namespace and collection is
// active with that version published, otherwise created or updated with its passages replaced.
func (s *Server) upload(sourceID, externalID string, body []byte) (int, any) {
	u, err := parseUpload(body)
	if err != nil {
		return invalid(err)
	}
	sections := splitSections(u.content)
	version := &Version{Version: u.version, Status: VersionProcessing, ContentSHA256: artifactHash(u.content)}
	if s.opts.PublishUploads {
		version.Status = VersionPublished
		version.PublishedAt = now()
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	var d *Document
	for i := range s.docs {
		c := &s.docs[i]
		if c.SourceID == sourceID && c.ExternalID == externalID &&
			c.Tenant == s.opts.Tenant && c.Workspace == s.opts.Workspace && c.Collection == u.collection {
			d = c
			break
		}
	}
	if d != nil && d.Status == StatusActive && d.ActiveVersion != nil &&
		d.ActiveVersion.Version == u.version && d.ActiveVersion.Status == VersionPublished {
		return http.StatusOK, uploadResponse{DocumentID: d.DocumentID, Version: u.version, Status: "unchanged"}
	}
	meta := Metadata{Language: u.language, Category: u.category, EffectiveDate: u.effectiveDate}
	if d == nil {
		doc := s.addDocumentLocked(Document{
			SourceID: sourceID, ExternalID: externalID, Collection: u.collection,
			Status: StatusActive, ActiveVersion: version, Metadata: meta,
		})
		d = &doc
	} else {
		d.Status, d.ActiveVersion, d.Metadata = StatusActive, version, meta
	}

	tenant, workspace := s.opts.Tenant, s.opts.Workspace
	s.passages = slices.DeleteFunc(s.passages, func(p indexedPassage) bool {
		return p.SourceID == sourceID && p.ExternalID == externalID &&
			p.Tenant == tenant && p.Workspace == workspace && p.Collection == u.collection
	})
	for _, sec := range sections {
		breadcrumb := []string{u.title}
		if sec.heading != "" {
			breadcrumb = append(breadcrumb, sec.heading)
		}
		s.addPassageLocked(Passage{
			SourceID: sourceID, ExternalID: externalID, DocumentID: d.DocumentID, Version: u.version,
			Title: u.title, Breadcrumb: breadcrumb, Section: sec.heading, Category: u.category,
			Language: u.language, Content: sec.content, Collection: u.collection,
		})
	}
	return http.StatusAccepted, uploadResponse{DocumentID: d.DocumentID, Version: u.version, Status: VersionProcessing}
}
