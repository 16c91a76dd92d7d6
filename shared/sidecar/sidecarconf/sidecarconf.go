// Package sidecarconf holds the rules a sidecar configuration must meet, without the Bedrock
// client: sidecar.New applies them before it builds the client, and a function that only reports
// the sidecar's state (GET /health of the status function) applies them without linking Bedrock.
package sidecarconf

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// ErrInvalid is wrapped by every error of Check: the options cannot make a sidecar.
var ErrInvalid = errors.New("invalid sidecar options")

// kbIDPattern is the API's rule for a knowledge base id.
var kbIDPattern = regexp.MustCompile(`^[0-9a-zA-Z]{1,10}$`)

// Check reports why a knowledge base id, endpoint override and timeout cannot make a sidecar, or
// nil. The id is taken with surrounding white space trimmed, as the sidecar uses it.
func Check(knowledgeBaseID, endpoint string, timeout time.Duration) error {
	kbID := strings.TrimSpace(knowledgeBaseID)
	switch {
	case kbID == "":
		return fmt.Errorf("%w: BEDROCK_KNOWLEDGE_BASE_ID is empty", ErrInvalid)
	case !kbIDPattern.MatchString(kbID):
		return fmt.Errorf("%w: BEDROCK_KNOWLEDGE_BASE_ID %q is not 1 to 10 letters and digits", ErrInvalid, kbID)
	case timeout < 0:
		return fmt.Errorf("%w: timeout %s is negative", ErrInvalid, timeout)
	}
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%w: BEDROCK_ENDPOINT %q is not an http(s) URL", ErrInvalid, endpoint)
		}
	}
	return nil
}
