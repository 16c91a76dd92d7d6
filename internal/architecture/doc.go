// Package architecture holds the test that keeps ARCHITECTURE.md true: the layer of every package
// under shared/ as the document's table names it, the import rules between the layers, and that
// only composition imports the lookup service: the others take the provider port or the
// lookup's records. It also keeps every function of the module and of bench/, tests aside,
// within 80 lines (length_test.go, with a list of the ones still longer, which may only shrink).
package architecture
