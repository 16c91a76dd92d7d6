// Package architecture holds the test that keeps ARCHITECTURE.md true: the layer of every package
// under shared/ as the document's table names it, and the import rules between the layers.
package architecture
