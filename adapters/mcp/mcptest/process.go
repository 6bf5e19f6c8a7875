//go:build unix

package mcptest

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Ended reports whether process pid has ended: gone, or a zombie (ended,
// only not yet reaped by whoever inherited it).
func Ended(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	return ok && strings.HasPrefix(rest, "Z")
}

// WaitEnded waits up to 30 s for process pid to end, failing the test if
// it does not.
func WaitEnded(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !Ended(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
