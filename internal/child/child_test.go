//go:build linux

package child_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/child"
)

// TestChildEndsWhenItsParentPanics runs this test binary as a parent that starts a long sleep
// with Prepare and then panics, as a test binary does on a panic or at its -timeout: the sleep
// must end with it, although nothing in the parent stopped it.
func TestChildEndsWhenItsParentPanics(t *testing.T) {
	if os.Getenv("CHILD_TEST_PARENT") == "1" {
		cmd := exec.Command("sleep", "300")
		child.Prepare(cmd)
		if err := cmd.Start(); err != nil {
			fmt.Println("start:", err)
			os.Exit(3)
		}
		fmt.Println(cmd.Process.Pid)
		panic("the parent dies without stopping its child")
	}
	parent := exec.Command(os.Args[0], "-test.run", "^TestChildEndsWhenItsParentPanics$")
	parent.Env = append(os.Environ(), "CHILD_TEST_PARENT=1")
	out, _ := parent.Output() // the parent's panic is its expected end
	var pid int
	for s := bufio.NewScanner(strings.NewReader(string(out))); s.Scan(); {
		if n, err := strconv.Atoi(strings.TrimSpace(s.Text())); err == nil {
			pid = n
		}
	}
	if pid == 0 {
		t.Fatalf("the parent printed no child pid:\n%s", out)
	}
	// The kernel signals the child as the parent exits; it is reaped by whoever adopts it, so
	// wait for it to go, however slowly the machine runs (a deadlock guard, not a measure).
	for deadline := time.Now().Add(time.Minute); alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = exec.Command("kill", "-9", strconv.Itoa(pid)).Run()
			t.Fatalf("child %d still runs a minute after its parent died", pid)
		}
	}
}

// alive reports whether pid runs (a zombie, killed and not yet reaped, does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses: "pid (comm) S ...".
	rest := string(b)[strings.LastIndexByte(string(b), ')')+1:]
	return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
}

// TestStopWaitsForTheStop: Stop returns once the child is stopped, every thread of it, and a
// SIGCONT lets it go on.
func TestStopWaitsForTheStop(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	child.Prepare(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Kill(cmd, syscall.SIGKILL); _ = cmd.Wait() })
	if err := child.Stop(cmd, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if s := procState(t, cmd.Process.Pid); s != 'T' {
		t.Fatalf("state %c after Stop, want T (stopped)", s)
	}
	if err := child.Kill(cmd, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for procState(t, cmd.Process.Pid) == 'T' {
		if time.Now().After(deadline) {
			t.Fatal("still stopped 10 s after SIGCONT")
		}
		time.Sleep(time.Millisecond)
	}
}

// procState is process pid's state letter from /proc.
func procState(t *testing.T, pid int) byte {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndexByte(string(b), ')')
	return b[i+2]
}
