// Package procnet tells, from Linux's /proc, whether a process holds the listening TCP socket
// of a port. The harnesses that start a child on a port found free a moment before use it: a
// port released by the finder can be handed to another process before the child binds it, and
// that process then answers in the child's place.
package procnet

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// Listens reports whether process pid holds a socket listening on TCP port (IPv4 or IPv6).
// known is false where /proc does not say (not Linux): the caller cannot tell, and should go on
// as it would without the check.
func Listens(pid, port int) (held, known bool) {
	sockets := map[string]bool{} // "socket:[inode]" of every listener on the port
	read := false
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		read = true
		for inode := range listeners(string(b), port) {
			sockets["socket:["+inode+"]"] = true
		}
	}
	if !read {
		return false, false
	}
	if len(sockets) == 0 {
		return false, true
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false, true // the process has ended
	}
	for _, fd := range fds {
		if target, err := os.Readlink(dir + "/" + fd.Name()); err == nil && sockets[target] {
			return true, true
		}
	}
	return false, true
}

// ListensOn is Listens for a "host:port" address; known is false for an address without a
// numeric port.
func ListensOn(pid int, addr string) (held, known bool) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false, false
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return false, false
	}
	return Listens(pid, n)
}

// listeners yields the inodes of the sockets of a /proc/net/tcp table that listen on port.
func listeners(table string, port int) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		lines := strings.Split(table, "\n")
		for _, line := range lines[min(1, len(lines)):] {
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
			fields := strings.Fields(line)
			if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			i := strings.LastIndexByte(fields[1], ':')
			if i < 0 {
				continue
			}
			if p, err := strconv.ParseUint(fields[1][i+1:], 16, 16); err == nil && int(p) == port {
				if !yield(fields[9]) {
					return
				}
			}
		}
	}
}
