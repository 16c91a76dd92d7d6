package api

import (
	"strings"
	"testing"
)

// The id checks keep their length limits although their patterns have no bounded repetition.
func TestIDChecksKeepTheirLimits(t *testing.T) {
	for _, tc := range []struct {
		check func(string) bool
		id    string
		want  bool
	}{
		{validCorrelationID, strings.Repeat("a", 64), true},
		{validCorrelationID, strings.Repeat("a", 65), false},
		{validCorrelationID, "", false},
		{validCorrelationID, "corr-1.x_y", true},
		{validCorrelationID, "corr 1", false},
		{validActorID, strings.Repeat("a", 128), true},
		{validActorID, strings.Repeat("a", 129), false},
		{validActorID, "", false},
		{validActorID, "agent-7@ops|x:y+z", true},
		{validActorID, "agent/7", false},
	} {
		if got := tc.check(tc.id); got != tc.want {
			t.Errorf("%q (%d bytes): %v, want %v", tc.id, len(tc.id), got, tc.want)
		}
	}
}
