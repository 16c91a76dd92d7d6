package main

// fitted is one parameter's fit (a margin's share, the semantic search's tie): its rows over the
// values tried, the configured value and the recommended one (nil when no value is within the
// limits), and the holdout sets' rows at both.
type fitted[R any] struct {
	Configured  float64  `json:"configured"`
	Recommended *float64 `json:"recommended"`
	Rows        []R      `json:"rows"`
	Holdout     []R      `json:"holdout,omitempty"`
}

// recommend sets the recommended value, best (nil for none), and, when there are holdout sets
// (held), measures them at the configured value and at best when it differs.
func (f *fitted[R]) recommend(best *float64, held bool, measure func(value float64) R) {
	f.Recommended = best
	if !held {
		return
	}
	f.Holdout = append(f.Holdout, measure(f.Configured))
	if best != nil && *best != f.Configured {
		f.Holdout = append(f.Holdout, measure(*best))
	}
}

// marks are the marks of the row of value v: " configured", " recommended", both or none.
func (f *fitted[R]) marks(v float64) string {
	marks := ""
	if v == f.Configured {
		marks += " configured"
	}
	if f.Recommended != nil && v == *f.Recommended {
		marks += " recommended"
	}
	return marks
}
