// Package architecture holds the test that keeps ARCHITECTURE.md true: the layer of every package
// under shared/ as the document's table names it, the import rules between the layers, and who
// may import the lookup service rather than the provider port.
package architecture
