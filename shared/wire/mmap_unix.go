//go:build unix

package wire

import (
	"fmt"
	"os"
	"syscall"
)

// readPrebuilt maps the prebuilt index file read-only instead of reading it into the heap: its
// pages are the page cache's, clean file pages the kernel can drop under memory pressure and read
// again, so a corpus of 10,000 procedures (a 120 MB file) serves in a 256 MB function. A loaded
// index uses the mapping in place for the life of the process (see loadKnowledge); release
// unmaps a file that is not used. The file must not be rewritten in place while a process maps it
// (a shorter file would fault its reads): cmd/index-build writes a new file and renames it over
// the old, which a running process never sees.
func readPrebuilt(path string) (b []byte, release func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if fi.Size() == 0 {
		return []byte{}, func() {}, nil
	}
	if fi.Size() > 1<<32 {
		return nil, nil, fmt.Errorf("%s: %d bytes, more than a prebuilt index can hold", path, fi.Size())
	}
	b, err = syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("map %s: %w", path, err)
	}
	return b, func() { _ = syscall.Munmap(b) }, nil
}
