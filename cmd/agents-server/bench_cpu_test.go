package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
)

// The server's own CPU, measured apart from its peers: the benchmark runs
// the composition root in a child process (this test binary again, with
// benchChildEnv set) and reads the child's CPU time from /proc, while the
// scripted model and the WebSocket client run here.

const benchChildEnv = "AGENTS_BENCH_SERVER_CHILD"

// runBenchChild serves the app until stdin closes; TestMain calls it in
// the child. It prints "<url> <token>" once ready.
func runBenchChild() int {
	tuneGC() // as main does: the benchmark measures the binary
	unlimited := httpapi.Budget{PerSecond: 1e9, Burst: 1e9}
	dir, err := os.MkdirTemp("", "agents-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	cfg := config{Addr: "127.0.0.1:0", DataDir: dir, LogLevel: "error", LogFormat: "text",
		HTTP:           httpapi.Config{BodyLimit: httpapi.DefaultBodyLimit, RateLimits: httpapi.RateLimits{Read: unlimited, Write: unlimited, AuthFail: unlimited}},
		PasswordParams: fastPasswords, DrainTimeout: time.Second}
	a, err := newApp(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// AGENTS_BENCH_CPUPROFILE=<file> profiles the server alone.
	if path := os.Getenv("AGENTS_BENCH_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil && pprof.StartCPUProfile(f) == nil {
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	go a.serve()
	fmt.Printf("%s %s\n", a.URL(), a.wb.AdminToken())
	signal.Ignore(syscall.SIGINT)
	_, _ = io.Copy(io.Discard, os.Stdin)
	a.shutdown()
	return 0
}

// benchServer is the child process serving the app.
type benchServer struct {
	cmd        *exec.Cmd
	url, token string
}

func startBenchServer(b *testing.B) *benchServer {
	b.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("reading a process's CPU time needs /proc")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchChildEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	fields := strings.Fields(line)
	if err != nil || len(fields) != 2 {
		b.Fatalf("the server child printed %q: %v", line, err)
	}
	return &benchServer{cmd: cmd, url: fields[0], token: fields[1]}
}

// cpu is the child's user+system CPU time so far.
func (s *benchServer) cpu(b *testing.B) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name (which may hold spaces) in ")".
	rest := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
	utime, _ := strconv.ParseInt(rest[11], 10, 64)
	stime, _ := strconv.ParseInt(rest[12], 10, 64)
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}

func (s *benchServer) call(b *testing.B, method, path, body string) map[string]any {
	req, _ := http.NewRequest(method, s.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode >= 300 {
		b.Fatalf("%s %s: %d %v", method, path, resp.StatusCode, out)
	}
	return out
}

// BenchmarkServerCPU reports the two figures the hot paths are held to:
//
//   - per-delta: the server's CPU per streamed delta over answers of 2,000
//     deltas (model adapter, hub, the WebSocket bus), in µs;
//
//   - per-run: a run of 10 deltas end to end — the wall time from the start
//     request to the final event on the bus, and the server's CPU for it;
//
//   - fan-out: a run of 2,000 deltas followed by 50 SSE streams, the wall
//     time from the start request to the last stream's output.
//
//     go test -run '^$' -bench ServerCPU ./cmd/agents-server
func BenchmarkServerCPU(b *testing.B) {
	model := scripted.New(scripted.Options{})
	model.SetScript("long", oneStep(scripted.Step{Text: strings.Repeat("tok", 2000), ChunkSize: 3}))
	model.SetScript("short", oneStep(scripted.Step{Text: strings.Repeat("tok", 10), ChunkSize: 3}))
	modelSrv := httptest.NewServer(model.Handler())
	defer modelSrv.Close()
	srv := startBenchServer(b)
	prov := srv.call(b, "POST", "/api/v1/providers", `{"name":"bench","base_url":"`+modelSrv.URL+`/v1","api":"responses","api_key":"k"}`)
	agents := map[string]string{}
	for _, m := range []string{"long", "short"} {
		agents[m] = srv.call(b, "POST", "/api/v1/agents", `{"name":"bench-`+m+`","model":"`+m+`","provider_id":"`+prov["id"].(string)+`"}`)["id"].(string)
	}
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.url, "http")+"/ws", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	_ = ws.WriteJSON(map[string]string{"type": "auth", "token": srv.token})
	_, _, _ = ws.ReadMessage()
	// session makes a named session (a named one gets no title call).
	session := func(b *testing.B, model string) string {
		return srv.call(b, "POST", "/api/v1/sessions", `{"name":"bench","agent_config_id":"`+agents[model]+`"}`)["id"].(string)
	}
	// run starts a run on the session and reads the bus to its final
	// event; it returns the deltas seen.
	run := func(b *testing.B, sessionID string) int {
		srv.call(b, "POST", "/api/v1/sessions/"+sessionID+"/runs", `{"input":"go"}`)
		n := 0
		for {
			_, frame, err := ws.ReadMessage()
			if err != nil {
				b.Fatal(err)
			}
			switch {
			case bytes.HasPrefix(frame, []byte(`{"type":"run.step"`)):
				n++
			case bytes.HasPrefix(frame, []byte(`{"type":"run.output"`)):
				return n
			case bytes.HasPrefix(frame, []byte(`{"type":"run.error"`)):
				b.Fatalf("the run failed: %s", frame)
			}
		}
	}
	b.Run("per-delta", func(b *testing.B) {
		deltas := 0
		before := srv.cpu(b)
		for b.Loop() {
			deltas += run(b, session(b, "long"))
		}
		b.ReportMetric(float64((srv.cpu(b)-before).Microseconds())/float64(deltas), "server-cpu-µs/delta")
	})
	// per-run counts from the start request to the final event: the
	// session is made before (its CPU is left out; /proc counts in 10 ms
	// ticks, so the sum over many runs is what is meaningful).
	b.Run("per-run", func(b *testing.B) {
		runs := 0
		var wall, cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			sid := session(b, "short")
			cpu0 := srv.cpu(b)
			b.StartTimer()
			start := time.Now()
			if n := run(b, sid); n != 10 {
				b.Fatalf("%d deltas, want 10", n)
			}
			wall += time.Since(start)
			cpu += srv.cpu(b) - cpu0
			runs++
		}
		b.ReportMetric(float64(wall.Microseconds())/1000/float64(runs), "wall-ms/run")
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(runs), "server-cpu-ms/run")
	})
	// fan-out: one run of 2,000 deltas watched by 50 SSE streams, each
	// opened before the run starts; the wall time from the start request
	// to the last stream's final event.
	b.Run("fan-out", func(b *testing.B) {
		const watchers = 50
		var wall time.Duration
		for b.Loop() {
			b.StopTimer()
			sid := session(b, "long")
			// The streams open as soon as the run's id is known and each
			// reads it from its first event (the hub replays what went
			// out before it attached).
			runID := srv.call(b, "POST", "/api/v1/sessions/"+sid+"/runs", `{"input":"go"}`)["run_id"].(string)
			b.StartTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for range watchers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if !srv.sseFollow(b, runID) {
						b.Error("a watcher's stream ended before the run's output")
					}
				}()
			}
			wg.Wait()
			wall += time.Since(start)
		}
		b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "wall-ms/run")
	})
}

// sseFollow reads a run's SSE stream from its start and reports whether
// it reached the run's output.
func (s *benchServer) sseFollow(b *testing.B, runID string) bool {
	req, _ := http.NewRequest("GET", s.url+"/api/v1/runs/"+runID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Error(err)
		return false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if bytes.HasPrefix(sc.Bytes(), []byte("event: run.output")) {
			return true
		}
	}
	return false
}
