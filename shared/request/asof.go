package request

import "time"

// The range of days as_of may name: a version is served from its day, and a day outside these
// years names no procedure the corpus could have.
const (
	MinAsOf = "2000-01-01"
	MaxAsOf = "2099-12-31"
)

// AsOf checks as_of: an ISO date (YYYY-MM-DD) from MinAsOf to MaxAsOf; missing (or null) is ""
// (today in the configured time zone).
func AsOf(asOf *string) (string, *Error) {
	if asOf == nil {
		return "", nil
	}
	msg := "as_of must be an ISO date (YYYY-MM-DD) from " + MinAsOf + " to " + MaxAsOf
	t, err := time.Parse(time.DateOnly, *asOf)
	if err != nil || t.Format(time.DateOnly) != *asOf || *asOf < MinAsOf || *asOf > MaxAsOf {
		return "", Invalid("as_of", msg)
	}
	return *asOf, nil
}
