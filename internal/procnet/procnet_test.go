package procnet

import (
	"net"
	"os"
	"runtime"
	"slices"
	"testing"
)

// A listener of this process is found on its port, and not on another port; a process that
// does not hold it does not count; a closed listener is gone.
func TestListens(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	held, known := Listens(os.Getpid(), port)
	if runtime.GOOS != "linux" {
		// Without /proc nothing is known, and callers go on without the check.
		if known || held {
			t.Errorf("Listens off Linux: held %v, known %v; want neither", held, known)
		}
		return
	}
	if !known {
		t.Fatal("/proc/net/tcp is not readable on Linux")
	}
	if !held {
		t.Fatalf("this process's listener on %d is not found", port)
	}
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	otherPort := other.Addr().(*net.TCPAddr).Port
	if held, _ := Listens(os.Getppid(), port); held {
		t.Errorf("the parent process is said to hold this process's listener on %d", port)
	}
	l.Close()
	if held, _ := Listens(os.Getpid(), port); held {
		t.Errorf("a closed listener on %d is still found", port)
	}
	if held, _ := Listens(os.Getpid(), otherPort); !held {
		t.Errorf("the second listener on %d is not found", otherPort)
	}
}

// The table's fields are read as the kernel writes them: the local port in hex after the last
// colon (IPv6 addresses have no colon inside, but the rule holds either way), state 0A.
func TestListenersReadsTheTable(t *testing.T) {
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1111 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 2222 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3333 1 0000000000000000 100 0 0 10 0
   3: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1 0000000000000000 100 0 0 10 0
`
	var got []string
	for inode := range listeners(table, 0x1F90) {
		got = append(got, inode)
	}
	if want := []string{"1111", "4444"}; !slices.Equal(got, want) {
		t.Errorf("listeners on 8080: %v, want %v (a connection, state 01, and another port are no listener)", got, want)
	}
	for range listeners("", 80) {
		t.Error("an empty table has a listener")
	}
}

// ListensOn reads the port of an address, and knows nothing of an address without one.
func TestListensOn(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if held, known := ListensOn(os.Getpid(), l.Addr().String()); known && !held {
		t.Errorf("this process's listener on %s is not found", l.Addr())
	}
	for _, addr := range []string{"127.0.0.1", "127.0.0.1:http", ""} {
		if held, known := ListensOn(os.Getpid(), addr); held || known {
			t.Errorf("ListensOn(%q) = %v, %v, want false, false", addr, held, known)
		}
	}
}
