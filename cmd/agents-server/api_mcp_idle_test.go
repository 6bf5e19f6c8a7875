package main

import (
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// idleSessions is how many /mcp sessions the idle test opens and leaves:
// the figure of issue 37's report (3,000 initialize calls took the server
// from 74 MB to 638 MB, still holding 3,031 goroutines a minute later).
const idleSessions = 3000

// memFigures is what the process holds: goroutines, live heap (after a
// collection) and resident memory (Linux; 0 elsewhere).
type memFigures struct {
	goroutines int
	heapMB     float64
	rssMB      float64
}

func measure() memFigures {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memFigures{goroutines: runtime.NumGoroutine(), heapMB: float64(ms.HeapAlloc) / (1 << 20), rssMB: residentMB()}
}

// residentMB is the process's resident set from /proc (0 where there is
// none).
func residentMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// Sessions nobody uses are closed after the idle timeout, and what they
// held goes with them: 3,000 idle sessions leave the goroutine count near
// where it was (polled until it drops, with a generous bound: no clock is
// asserted). The heap and RSS figures are logged. Not parallel: it counts
// the whole process's goroutines.
func TestMCPIdleSessionsExpireAndFreeWhatTheyHeld(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 3,000 MCP sessions")
	}
	cfg := testConfig(t)
	cfg.MCPSessionIdle = 15 * time.Second // long enough that all 3,000 are open at once
	h := startServer(t, cfg)
	// 3,000 sessions from three accounts, each at the highest per-user cap.
	h.call("PUT", "/api/v1/settings/max_mcp_sessions_per_user", h.admin, map[string]string{"value": "1000"}).want(t, 200)
	tokens := []string{h.member("idle1"), h.member("idle2"), h.member("idle3")}
	transport := &http.Transport{MaxIdleConnsPerHost: 16}
	client := &http.Client{Transport: transport}
	// One session first, so what every session shares (the SDK's schema
	// cache, the pools) is in the baseline.
	if r := h.mcpPost(client, h.admin, initializeBody); r.Status != 200 || r.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize answered %d %s", r.Status, r.Body)
	}
	transport.CloseIdleConnections()
	base := measure()

	var wg sync.WaitGroup
	work := make(chan int)
	failed := make(chan string, idleSessions)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				r := h.mcpPost(client, tokens[i%len(tokens)], initializeBody)
				if r.Status != 200 || r.Header.Get("Mcp-Session-Id") == "" {
					failed <- strconv.Itoa(r.Status) + " " + string(r.Body)
				}
			}
		}()
	}
	for i := range idleSessions {
		work <- i
	}
	close(work)
	wg.Wait()
	close(failed)
	for f := range failed {
		t.Fatalf("an initialize failed: %s", f)
	}
	transport.CloseIdleConnections()
	peak := measure()

	var after memFigures
	pollUntil(t, 2*time.Minute, 100*time.Millisecond, func() bool {
		after = measure()
		return after.goroutines <= base.goroutines+20
	})
	t.Logf("%d idle MCP sessions: goroutines %d → %d → %d, live heap %.1f → %.1f → %.1f MB, RSS %.1f → %.1f → %.1f MB "+
		"(before, once opened, once expired)", idleSessions, base.goroutines, peak.goroutines, after.goroutines,
		base.heapMB, peak.heapMB, after.heapMB, base.rssMB, peak.rssMB, after.rssMB)
}
