package domain

import (
	"errors"
	"regexp"
	"time"
)

// SyncFailure is one document a sync could not deliver.
type SyncFailure struct {
	DocumentID string `json:"document_id"`
	Reason     string `json:"reason"`
}

// LanguageResult is the manifest sync of one language (the results of POST /sync).
type LanguageResult struct {
	Language  string        `json:"language"`
	Documents int           `json:"documents"`
	Uploaded  int           `json:"uploaded"`
	Unchanged int           `json:"unchanged"`
	Failed    []SyncFailure `json:"failed"`
	// Switched names each document the sync uploaded in its version in force: the version the
	// provider served before (From, "" when it held none, as the last verification found it)
	// and the one uploaded (To).
	Switched []SwitchedDocument `json:"switched"`
	Note     string             `json:"note"`
}

// SwitchedDocument is one document a manifest sync switched to its version in force.
type SwitchedDocument struct {
	DocumentID string `json:"document_id"`
	From       string `json:"from"`
	To         string `json:"to"`
}

// Run is one manifest sync.
type Run struct {
	RunID   string           `json:"run_id"`
	Results []LanguageResult `json:"results"`
}

// SyncReport is the result the central sync workflow reports for one run and language (POST
// /sync-reports). A run that syncs several languages reports each under the same run_id.
type SyncReport struct {
	RunID      string
	Language   string
	Synced     int
	Failed     int
	FinishedAt time.Time
	// ReceivedAt is when the service took the report; the sync service sets it.
	ReceivedAt time.Time
}

// ReportResult says what taking a sync report did.
type ReportResult struct {
	// Duplicate is true when a report with this run_id and language was already stored; nothing
	// changed.
	Duplicate bool
	// Differs is true for a duplicate whose figures or finished_at differ from the stored
	// report's: the caller reused a run_id for another result.
	Differs bool
	// Latest is true when the stored report of this run_id and language is the newest of its
	// language after the call: for the copy that stored it and for duplicates alike.
	Latest bool
}

// ErrInvalidReport wraps a report that cannot be stored as given.
var ErrInvalidReport = errors.New("invalid sync report")

// runIDPattern is a run_id's alphabet; ValidRunID adds the length limit (a bounded repetition
// would compile to 128 copies of the class at every cold start).
var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]+$`)

// ValidRunID reports whether a run_id can be stored: ^[A-Za-z0-9._:-]{1,128}$.
func ValidRunID(id string) bool { return len(id) <= 128 && runIDPattern.MatchString(id) }
