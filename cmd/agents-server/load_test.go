package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
)

// The load suite: the real binary, LOAD_SESSIONS conversations each
// starting and streaming runs back to back (one request per run, Accept:
// text/event-stream), LOAD_WATCHERS WebSocket connections watching every
// run, and LOAD_READERS SSE readers replaying finished runs from their
// first event, for LOAD_SECONDS. Each model delta carries the moment the
// scripted model sent it, so every client measures how long deltas took to
// reach it. It reports runs/s, p50/p99 delta latency, gaps, errors, and the
// server's RSS and goroutines over time, and fails on an error, a gap
// where none may come, or goroutines that do not come back to their
// baseline once the load ends (a leak).
//
//	go tool task load  (LOAD_SECONDS=60 LOAD_SESSIONS=16 … for a long run)
func TestLoad(t *testing.T) {
	t.Parallel()
	seconds, sessions := envInt("LOAD_SECONDS", 3), envInt("LOAD_SESSIONS", 6)
	watchers, readers := envInt("LOAD_WATCHERS", 3), envInt("LOAD_READERS", 3)
	model, modelURL := startScripted(t)
	model.SetScript("load", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{Text: strings.Repeat("x", 200), ChunkSize: 1, DelayMS: 4, StampDeltas: true}}}}})
	p := startBinary(t, t.TempDir())
	_, prov, _ := p.call(t, "POST", "/api/v1/providers", map[string]any{"name": "m", "type": "openai", "api": "responses",
		"base_url": modelURL + "/v1", "api_key": "k"})
	_, agent, _ := p.call(t, "POST", "/api/v1/agents", map[string]any{"name": "loader", "model": "load", "provider_id": prov["id"]})
	var sids []string
	for i := 0; i < sessions; i++ {
		_, s, _ := p.call(t, "POST", "/api/v1/sessions", map[string]any{"agent_config_id": agent["id"], "name": fmt.Sprint("load-", i)})
		sids = append(sids, s["id"].(string))
	}
	base := p.sample(t)
	t.Logf("baseline: %s", base)

	var (
		runs, gaps, watcherGaps, errors, throttled atomic.Int64
		latMu                                      sync.Mutex
		lat                                        []time.Duration
		finished                                   = make(chan string, 1024)
		stop                                       = make(chan struct{})
		wg                                         sync.WaitGroup
	)
	record := func(payload json.RawMessage, at time.Time) {
		var d domain.DeltaPayload
		json.Unmarshal(payload, &d)
		if ns, err := strconv.ParseInt(strings.TrimSpace(d.Delta), 10, 64); err == nil {
			latMu.Lock()
			lat = append(lat, at.Sub(time.Unix(0, ns)))
			latMu.Unlock()
		}
	}
	fail := func(format string, args ...any) {
		if errors.Add(1) <= 5 {
			t.Logf("error: "+format, args...)
		}
	}
	// Conversations: start and stream in one request, back to back.
	for _, sid := range sids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("POST", p.url+"/api/v1/sessions/"+sid+"/runs", bytes.NewReader([]byte(`{"input":"go"}`)))
				req.Header.Set("Authorization", "Bearer "+p.token)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "text/event-stream")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					fail("start: %v", err)
					return
				}
				if resp.StatusCode == 429 {
					resp.Body.Close()
					throttled.Add(1)
					time.Sleep(200 * time.Millisecond)
					continue
				}
				if resp.StatusCode != 201 {
					fail("start: %d", resp.StatusCode)
					resp.Body.Close()
					return
				}
				var runID string
				ended := readEvents(bufio.NewReader(resp.Body), func(ev domain.Event) {
					switch ev.Type {
					case domain.EventRunStarted:
						var s domain.RunStartedPayload
						json.Unmarshal(ev.Payload, &s)
						runID = s.RunID
					case domain.EventStep:
						record(ev.Payload, time.Now())
					case domain.EventGap:
						gaps.Add(1)
					case domain.EventError:
						fail("run error: %s", ev.Payload)
					}
				})
				resp.Body.Close()
				if !ended {
					fail("a stream of %s ended without its final event", sid)
					continue
				}
				runs.Add(1)
				select {
				case finished <- runID:
				default:
				}
			}
		}()
	}
	// Watchers: every run of the user over the bus.
	for i := 0; i < watchers; i++ {
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(p.url, "http")+"/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		ws.WriteJSON(map[string]any{"type": "auth", "token": p.token})
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ws.Close()
			for {
				_, frame, err := ws.ReadMessage()
				if err != nil {
					return // closed at the end
				}
				at := time.Now()
				var ev domain.Event
				json.Unmarshal(frame, &ev)
				switch ev.Type {
				case domain.EventStep:
					record(ev.Payload, at)
				case domain.EventGap:
					watcherGaps.Add(1)
				}
			}
		}()
		go func() { <-stop; time.Sleep(time.Second); ws.Close() }()
	}
	// Readers: finished runs replayed from the first event, whole.
	for i := 0; i < readers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var id string
				select {
				case <-stop:
					return
				case id = <-finished:
				}
				req, _ := http.NewRequest("GET", p.url+"/api/v1/runs/"+id+"/events", nil)
				req.Header.Set("Authorization", "Bearer "+p.token)
				resp, err := http.DefaultClient.Do(req)
				if err != nil || resp.StatusCode != 200 {
					fail("replay %s: %v %v", id, err, resp)
					continue
				}
				steps := 0
				ended := readEvents(bufio.NewReader(resp.Body), func(ev domain.Event) {
					switch ev.Type {
					case domain.EventGap:
						gaps.Add(1)
					case domain.EventStep:
						steps++
					}
				})
				resp.Body.Close()
				if !ended || steps == 0 {
					fail("replay of %s: ended %v, %d deltas", id, ended, steps)
				}
			}
		}()
	}
	start := time.Now()
	var samples []string
	for time.Since(start) < time.Duration(seconds)*time.Second {
		time.Sleep(500 * time.Millisecond)
		samples = append(samples, p.sample(t).String())
	}
	close(stop)
	wg.Wait()
	took := time.Since(start)

	// After the load: goroutines come back to the baseline (the clients'
	// idle keep-alive connections would hold one each). The server keeps a
	// few idle connections to the model (two goroutines each) for the next
	// call: leakSlack of them is no leak; a leak per run would be hundreds.
	http.DefaultClient.CloseIdleConnections()
	var after loadSample
	deadline := time.Now().Add(20 * time.Second)
	for {
		after = p.sample(t)
		if after.goroutines <= base.goroutines+leakSlack || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	slices.Sort(lat)
	pct := func(q float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[int(float64(len(lat)-1)*q)]
	}
	t.Logf("load: %d conversations, %d watchers, %d readers, %.1fs: %d runs (%.1f runs/s), %d deltas timed, "+
		"latency p50 %v p99 %v, gaps %d (watchers %d), errors %d, throttled %d",
		sessions, watchers, readers, took.Seconds(), runs.Load(), float64(runs.Load())/took.Seconds(), len(lat),
		pct(0.5).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond), gaps.Load(), watcherGaps.Load(), errors.Load(), throttled.Load())
	t.Logf("server over time: %s", strings.Join(samples, "; "))
	t.Logf("after the load: %s (baseline %s)", after, base)
	if errors.Load() > 0 || gaps.Load() > 0 || runs.Load() == 0 {
		t.Errorf("errors %d, gaps %d, runs %d", errors.Load(), gaps.Load(), runs.Load())
	}
	if after.goroutines > base.goroutines+leakSlack || after.live != 0 {
		t.Errorf("not back to baseline: %s, baseline %s", after, base)
	}
	if path := os.Getenv("LOAD_REPORT"); path != "" {
		os.WriteFile(path, []byte(fmt.Sprintf("runs_per_s=%.1f p50=%v p99=%v gaps=%d errors=%d rss_peak_mb=%s\n",
			float64(runs.Load())/took.Seconds(), pct(0.5), pct(0.99), gaps.Load(), errors.Load(), peak(samples))), 0o644)
	}
}

// leakSlack is how many goroutines past its baseline a server may keep
// after the load: idle keep-alive connections to the model, two each.
const leakSlack = 10

// readEvents reads SSE frames, handing each event to on, until the stream
// ends; it reports whether a final event came.
func readEvents(rd *bufio.Reader, on func(domain.Event)) bool {
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return false
		}
		if data, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok {
			var ev domain.Event
			if json.Unmarshal([]byte(data), &ev) == nil {
				on(ev)
				if ev.Final() {
					return true
				}
			}
		}
	}
}

// loadSample is the server's footprint at a moment.
type loadSample struct {
	rssMB      float64
	heapMB     float64 // the Go heap in use (live data and what the collector has not yet swept)
	goroutines int
	live       int
}

func (s loadSample) String() string {
	return fmt.Sprintf("rss %.0f MB, heap %.0f MB, %d goroutines, %d live runs", s.rssMB, s.heapMB, s.goroutines, s.live)
}

// peak is the highest RSS among printed samples.
func peak(samples []string) string {
	best := 0.0
	for _, s := range samples {
		var mb float64
		fmt.Sscanf(s, "rss %f MB", &mb)
		best = max(best, mb)
	}
	return strconv.FormatFloat(best, 'f', 0, 64)
}

// sample reads the server's RSS from /proc and its goroutines and live
// runs from /metrics.
func (p *process) sample(t *testing.T) loadSample {
	t.Helper()
	var s loadSample
	if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid)); err == nil {
		for _, l := range strings.Split(string(status), "\n") {
			if kb, ok := strings.CutPrefix(l, "VmRSS:"); ok {
				n, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 64)
				s.rssMB = n / 1024
			}
		}
	}
	_, _, raw := p.call(t, "GET", "/metrics", nil)
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, "go_goroutines "); ok {
			s.goroutines, _ = strconv.Atoi(v)
		}
		if v, ok := strings.CutPrefix(l, "go_memstats_heap_inuse_bytes "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			s.heapMB = f / (1 << 20)
		}
		if v, ok := strings.CutPrefix(l, "agents_runs_live "); ok {
			s.live, _ = strconv.Atoi(v)
		}
	}
	return s
}
