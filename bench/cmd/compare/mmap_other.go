//go:build !unix

package main

import "os"

// mapFile reads a file (see the unix version, which maps it as the lookup function does).
func mapFile(path string) ([]byte, error) { return os.ReadFile(path) }
