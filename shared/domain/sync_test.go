package domain

import (
	"strings"
	"testing"
)

func TestValidRunID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{strings.Repeat("r", 128), true},
		{strings.Repeat("r", 129), false},
		{"", false},
		{"run-2026-12-01T10:00:00.1_a", true},
		{"run 1", false},
		{"run/1", false},
	} {
		if got := ValidRunID(tc.id); got != tc.want {
			t.Errorf("%q (%d bytes): %v, want %v", tc.id, len(tc.id), got, tc.want)
		}
	}
}
