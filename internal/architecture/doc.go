// Package architecture holds the test that keeps ARCHITECTURE.md true: the layer of every package
// under shared/ as the document's table names it, the import rules between the layers, and that
// only composition imports the lookup service: the others take the provider port or the
// lookup's records.
package architecture
