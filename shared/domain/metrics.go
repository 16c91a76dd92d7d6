package domain

// Metrics records metrics; obs.EMF implements it.
type Metrics interface {
	Count(name string, n int)
	// Emit records several metrics at once with extra dimensions.
	Emit(dims map[string]string, metrics ...Metric)
}

// Metric is one value of a metric, with its CloudWatch unit ("Count", "Milliseconds").
type Metric struct {
	Name  string
	Unit  string
	Value float64
}
