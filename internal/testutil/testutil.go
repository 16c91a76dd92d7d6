// Package testutil holds helpers the process-level tests share: free and closed loopback
// addresses, a buffer that a child process and the test can use at once, and a corpus folder.
package testutil

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ragcorefake"
	"github.com/northstar-mobility/mobilityops-knowledge/knowledge"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
)

// FreeAddr returns a loopback address with a port that was free a moment ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// FreeAddrs returns n distinct loopback addresses whose ports were free a moment ago. It holds
// every port open until it has all of them, so that no two of the n are the same port (which
// calling FreeAddr n times does not promise).
func FreeAddrs(t testing.TB, n int) []string {
	t.Helper()
	out := make([]string, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		out = append(out, l.Addr().String())
	}
	return out
}

// ClosedAddr returns a loopback address where nothing listens, for as long as the test runs: the
// port stays bound to a socket that never listens, so a dial is refused and no other process can
// be handed the port in the meantime (which closing a listener does not promise).
func ClosedAddr(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}

// SyncBuffer is a bytes.Buffer safe for a process's concurrent writes and the test's reads.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Len is how many bytes the buffer holds.
func (s *SyncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

// Reset empties the buffer.
func (s *SyncBuffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}

// WriteCorpus writes procedures into a new folder laid out as KNOWLEDGE_DIR expects
// (<language>/<id>.md), files(lang) giving each language's files by id, and loads it with
// knowledge.LoadDir, as a function would.
func WriteCorpus(t testing.TB, files func(lang string) map[string]string) *knowledge.Corpus {
	t.Helper()
	dir := t.TempDir()
	for _, lang := range knowledge.Languages {
		if err := os.MkdirAll(filepath.Join(dir, lang), 0o755); err != nil {
			t.Fatal(err)
		}
		for id, raw := range files(lang) {
			if err := os.WriteFile(filepath.Join(dir, lang, id+".md"), []byte(raw), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	c, err := knowledge.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ServeRAGcore serves the fake RAGcore with the embedded corpus published under the default
// source prefix, its token token, until the test ends; wrap, when set, sits in front of it.
func ServeRAGcore(t testing.TB, token string, wrap func(http.Handler) http.Handler) (*ragcorefake.Server, *httptest.Server) {
	t.Helper()
	c, err := knowledge.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	fake := ragcorefake.New(ragcorefake.Options{Token: token})
	fake.LoadCorpus(c, config.DefaultRAGcoreSourcePrefix)
	var h http.Handler = fake
	if wrap != nil {
		h = wrap(fake)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return fake, srv
}
