// Package bench is the side-by-side benchmark of the project's lookup against bleve, a module of
// its own so that bleve never enters the root module or the function binaries. gen writes
// corpora of a chosen size, systems builds the systems compared over one corpus, cmd/compare
// measures and reports them, and this package's benchmarks (`go test -bench . ./`) time one
// question per iteration on each system. BENCHMARKS.md at the repository root has the figures.
package bench
