package testutil

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// TestClosedAddrRefusesAndStaysReserved: a dial to the address is refused, and while the test
// runs no listener can take its port.
func TestClosedAddrRefusesAndStaysReserved(t *testing.T) {
	addr := ClosedAddr(t)
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("dial %s succeeded", addr)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Fatalf("a listener took %s", addr)
	}
}

// TestFreeAddrsAreDistinct: the n addresses are n different ports.
func TestFreeAddrsAreDistinct(t *testing.T) {
	addrs := FreeAddrs(t, 8)
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] {
			t.Fatalf("%s twice in %v", a, addrs)
		}
		seen[a] = true
	}
}
