package ddblocal

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestStartReplacesATakenPort hands Start a port another listener holds, as happens when a
// parallel test binds the port Start found free: Start must try a fresh port and answer there,
// while a port the caller chose and cannot have is an error naming the cause.
func TestStartReplacesATakenPort(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	jar, err := JarDir(root)
	if err != nil {
		t.Fatal(err)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	// What holds the port answers as DynamoDB Local would: only DynamoDB Local's own listener
	// may make it ready.
	go http.Serve(taken, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write([]byte(`{"TableNames":[]}`))
	}))

	real := freePort
	calls := 0
	freePort = func() (int, error) {
		calls++
		if calls == 1 {
			return takenPort, nil
		}
		return real()
	}
	defer func() { freePort = real }()

	local, err := Start(context.Background(), jar, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer local.Stop()
	if calls != 2 || strings.HasSuffix(local.Endpoint, ":"+strconv.Itoa(takenPort)) {
		t.Errorf("Start asked for %d ports and answers on %s; the taken port was %d", calls, local.Endpoint, takenPort)
	}

	_, err = Start(context.Background(), jar, takenPort)
	if !errors.Is(err, errPortTaken) {
		t.Errorf("start on a taken port: %v, want errPortTaken", err)
	}
}
