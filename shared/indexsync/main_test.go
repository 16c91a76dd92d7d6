package indexsync_test

import (
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal/ddbtest"
)

// TestMain stops the DynamoDB Local that the versions tests start.
func TestMain(m *testing.M) { ddbtest.Main(m) }
