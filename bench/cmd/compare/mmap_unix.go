//go:build unix

package main

import (
	"os"
	"syscall"
)

// mapFile maps a file read-only, as the lookup function maps its prebuilt index
// (shared/wire), so that its bytes are the page cache's and not the heap's.
func mapFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return []byte{}, err
	}
	return syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
}
