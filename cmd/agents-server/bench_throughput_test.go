package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
	"github.com/agents-server/agents-server/ports/porttest"
)

// Write throughput across replicas (issue 40 item 6): every write on
// Postgres takes one advisory lock first, so writers on every replica
// commit one at a time. The benchmark shows whether that lock caps a team
// before its CPUs do: N real binaries (1, 2, 3) on one database, each
// running M concurrent runs for a few seconds, each run a tool call
// (todo_write) then an answer of 1,000 deltas. Reported for the whole
// team:
//
//   - runs/s, and each run's wall time (p50, in ms);
//   - write-p50/p99-ms: the store's writes (turn records, checkpoints, seq
//     marks, the end: a run's durable writes), begin to commit, from the
//     replicas' agents_store_write_duration_seconds histograms (quantiles
//     interpolated in the buckets, as histogram_quantile does);
//   - lockwait-p50/p99-ms: a write's wait until it held the write lock (a
//     pooled connection, BEGIN, the lock: agents_store_write_lock_wait_seconds);
//   - lock-busy: the share of the wall time the lock was held (the writes'
//     time less their wait, summed over every replica: at 1 the lock is
//     the cap), and hold-ms, how long a write held it on average;
//   - server-cores, pg-cores, machine-cores: the CPU the replicas, the
//     database's backends and the whole machine (other work included)
//     spent per wall second. Near the machine's cores, the CPUs are the
//     cap.
//
// AGENTS_BENCH_RUNS_PER_REPLICA sets M (4), AGENTS_BENCH_SECONDS how long
// the runs start (4).
//
//	export AGENTS_TEST_POSTGRES=postgres://…
//	go test -run '^$' -bench ReplicaThroughput -benchtime 1x ./cmd/agents-server
func BenchmarkReplicaThroughput(b *testing.B) {
	perReplica := envInt("AGENTS_BENCH_RUNS_PER_REPLICA", 4)
	window := time.Duration(envInt("AGENTS_BENCH_SECONDS", 4)) * time.Second
	const deltas = 1000
	model := scripted.New(scripted.Options{})
	model.SetScript("throughput", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{Text: "Noting it.", ToolCalls: []scripted.ToolCall{{Name: "todo_write", Arguments: `{"todos":[{"content":"answer","status":"in_progress"}]}`}}},
		{Text: strings.Repeat("tok", deltas), ChunkSize: 3},
	}}}})
	modelSrv := httptest.NewServer(model.Handler())
	defer modelSrv.Close()
	for _, n := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			benchThroughput(b, n, perReplica, window, modelSrv.URL)
		})
	}
}

func benchThroughput(b *testing.B, replicas, perReplica int, window time.Duration, modelURL string) {
	url := pgtest.URL(b, "write throughput on Postgres")
	team := make([]*tpReplica, replicas)
	team[0] = startTPReplica(b, url)
	prov := team[0].call(b, http.DefaultClient, "POST", "/api/v1/providers", `{"name":"bench","base_url":"`+modelURL+`/v1","api":"responses","api_key":"k"}`)
	agent := team[0].call(b, http.DefaultClient, "POST", "/api/v1/agents", `{"name":"bench","model":"throughput","provider_id":"`+prov["id"].(string)+`"}`)["id"].(string)
	// Every run is the admin's: the per-account cap of live runs would
	// refuse a team's worth at once.
	team[0].call(b, http.DefaultClient, "PUT", "/api/v1/settings/max_runs_per_user", `{"value":"1000"}`)
	for i := 1; i < replicas; i++ {
		team[i] = startTPReplica(b, url)
	}
	// Each worker runs in a session of its own, one run after another, and
	// speaks from an address of its own: the per-address request budgets
	// are a guard against people, not what is measured.
	type worker struct {
		r       *tpReplica
		client  *http.Client
		session string
	}
	var workers []worker
	for i, r := range team {
		for k := range perReplica {
			idx := i*perReplica + k
			from := net.IPv4(127, 1, byte(idx/250), byte(idx%250+1))
			client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{
				DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: from}}).DialContext}}
			sess := r.call(b, client, "POST", "/api/v1/sessions", `{"name":"bench","agent_config_id":"`+agent+`"}`)["id"].(string)
			workers = append(workers, worker{r, client, sess})
		}
	}
	pg := openTPDatabase(b, url)

	var (
		mu        sync.Mutex
		runWalls  []time.Duration
		wall      time.Duration
		serverCPU time.Duration
		pgCPU     time.Duration
		machine   time.Duration
		writes    = tpHistogram{}
		waits     = tpHistogram{}
	)
	for b.Loop() {
		w0, l0 := scrapeTeam(b, team)
		cpu0, pg0, m0 := teamCPU(b, team), pg.cpu(b), machineBusy(b)
		start := time.Now()
		var wg sync.WaitGroup
		for _, w := range workers {
			wg.Go(func() {
				for time.Since(start) < window {
					began := time.Now()
					out, err := w.r.try(w.client, "POST", "/api/v1/sessions/"+w.session+"/runs", `{"input":"go"}`, "Prefer", "wait=60")
					if err == nil && out["status"] != "completed" {
						err = fmt.Errorf("a run ended %v: %v", out["status"], out)
					}
					if err != nil {
						b.Error(err)
						return
					}
					mu.Lock()
					runWalls = append(runWalls, time.Since(began))
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		wall += time.Since(start)
		serverCPU += teamCPU(b, team) - cpu0
		pgCPU += since(pg0, pg.cpu(b))
		machine += machineBusy(b) - m0
		w1, l1 := scrapeTeam(b, team)
		writes.add(w1.minus(w0))
		waits.add(l1.minus(l0))
	}
	if len(runWalls) == 0 || writes.count() == 0 {
		b.Fatalf("%d runs, %v writes heard: nothing to report", len(runWalls), writes.count())
	}
	slices.Sort(runWalls)
	secs := wall.Seconds()
	b.ReportMetric(float64(len(runWalls))/secs, "runs/s")
	b.ReportMetric(ms(runWalls[len(runWalls)/2]), "run-p50-ms")
	b.ReportMetric(writes.count()/float64(len(runWalls)), "writes/run")
	b.ReportMetric(writes.quantile(0.50)*1000, "write-p50-ms")
	b.ReportMetric(writes.quantile(0.99)*1000, "write-p99-ms")
	b.ReportMetric(waits.quantile(0.50)*1000, "lockwait-p50-ms")
	b.ReportMetric(waits.quantile(0.99)*1000, "lockwait-p99-ms")
	b.ReportMetric((writes.sum()-waits.sum())/secs, "lock-busy")
	b.ReportMetric((writes.sum()-waits.sum())/writes.count()*1000, "hold-ms")
	b.ReportMetric(serverCPU.Seconds()/secs, "server-cores")
	b.ReportMetric(pgCPU.Seconds()/secs, "pg-cores")
	b.ReportMetric(machine.Seconds()/secs, "machine-cores")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// tpReplica is a real binary on the benchmark's database.
type tpReplica struct {
	cmd        *exec.Cmd
	url, token string
}

// startTPReplica runs the binary on the database at url, logging only
// warnings (a debug log would be part of what is measured), and stops it
// (SIGTERM, then SIGKILL) when the benchmark ends.
func startTPReplica(b *testing.B, url string) *tpReplica {
	b.Helper()
	cmd := exec.Command(agentsBinary(b), "--addr", "127.0.0.1:0", "--log-level", "warn", "--data-dir", b.TempDir(), "--database-url", url)
	stderr := &porttest.Buffer{}
	cmd.Stderr = stderr
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan struct{})
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
		close(exited)
	}()
	select {
	case line := <-lines:
		m := readyLine.FindStringSubmatch(line)
		if m == nil {
			b.Fatalf("no ready line (got %q); stderr:\n%s", line, stderr)
		}
		return &tpReplica{cmd: cmd, url: m[1], token: m[2]}
	case <-time.After(60 * time.Second):
		b.Fatalf("no ready line; stderr:\n%s", stderr)
	}
	return nil
}

// call sends a JSON request with the admin's token through client; headers
// are name, value pairs. A failure, or a status of 300 or more, fails the
// benchmark.
func (r *tpReplica) call(b *testing.B, client *http.Client, method, path, body string, headers ...string) map[string]any {
	out, err := r.try(client, method, path, body, headers...)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// try is call for a goroutine of its own, which may not end the benchmark.
func (r *tpReplica) try(client *http.Client, method, path, body string, headers ...string) (map[string]any, error) {
	req, _ := http.NewRequest(method, r.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	return out, nil
}

// tpHistogram is a Prometheus histogram as scraped: the cumulative count
// at each bucket's upper bound, and the sum of what was observed.
type tpHistogram map[float64]float64

// tpSum is the key holding a histogram's sum (no bucket has a negative
// bound).
const tpSum = -1

func (h tpHistogram) add(o tpHistogram) {
	for k, v := range o {
		h[k] += v
	}
}

func (h tpHistogram) minus(o tpHistogram) tpHistogram {
	d := tpHistogram{}
	for k, v := range h {
		d[k] = v - o[k]
	}
	return d
}

func (h tpHistogram) sum() float64   { return h[tpSum] }
func (h tpHistogram) count() float64 { return h[math.Inf(1)] }

// quantile interpolates linearly inside the bucket holding the q-th
// observation, as Prometheus's histogram_quantile does; in the +Inf bucket
// it answers the highest finite bound.
func (h tpHistogram) quantile(q float64) float64 {
	var bounds []float64
	for k := range h {
		if k != tpSum {
			bounds = append(bounds, k)
		}
	}
	slices.Sort(bounds)
	rank := q * h.count()
	lower, below := 0.0, 0.0
	for _, le := range bounds {
		if h[le] >= rank && h[le] > below {
			if math.IsInf(le, 1) {
				return lower
			}
			return lower + (le-lower)*(rank-below)/(h[le]-below)
		}
		lower, below = le, h[le]
	}
	return lower
}

// scrapeTeam sums every replica's write and lock-wait histograms.
func scrapeTeam(b *testing.B, team []*tpReplica) (writes, waits tpHistogram) {
	writes, waits = tpHistogram{}, tpHistogram{}
	for _, r := range team {
		req, _ := http.NewRequest("GET", r.url+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+r.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		text, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("GET /metrics: %d %s", resp.StatusCode, text)
		}
		for line := range strings.Lines(string(text)) {
			for name, h := range map[string]tpHistogram{"agents_store_write_duration_seconds": writes, "agents_store_write_lock_wait_seconds": waits} {
				if rest, ok := strings.CutPrefix(line, name); ok {
					parseTPSample(b, rest, h)
				}
			}
		}
	}
	if writes.count() == 0 {
		b.Fatal("the replicas' /metrics have no agents_store_write_duration_seconds")
	}
	return writes, waits
}

// parseTPSample adds one sample line of a histogram (after its name) to h:
// `_bucket{le="0.005"} 12`, `_sum 0.3`; others (`_count`) are skipped.
func parseTPSample(b *testing.B, rest string, h tpHistogram) {
	fields := strings.Fields(rest)
	if len(fields) != 2 {
		return
	}
	v, err := strconv.ParseFloat(fields[1], 64)
	if err != nil {
		b.Fatalf("a sample %q: %v", rest, err)
	}
	switch {
	case fields[0] == "_sum":
		h[tpSum] += v
	case strings.HasPrefix(fields[0], `_bucket{le="`):
		le, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(fields[0], `_bucket{le="`), `"}`), 64)
		if err != nil {
			b.Fatalf("a bucket %q: %v", rest, err)
		}
		h[le] += v
	}
}

// teamCPU is the replicas' user+system CPU time so far.
func teamCPU(b *testing.B, team []*tpReplica) time.Duration {
	var sum time.Duration
	for _, r := range team {
		sum += procCPU(b, r.cmd.Process.Pid)
	}
	return sum
}

// procCPU is a process's user+system CPU time so far, from /proc (0 for
// one that has gone: a database backend may end).
func procCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		if os.IsNotExist(err) {
			return 0
		}
		b.Fatal(err)
	}
	// Fields after the command name (which may hold spaces) in ")".
	rest := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
	utime, _ := strconv.ParseInt(rest[11], 10, 64)
	stime, _ := strconv.ParseInt(rest[12], 10, 64)
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}

// machineBusy is the CPU time every core of the machine spent on anything
// but idling and waiting for I/O, from /proc/stat.
func machineBusy(b *testing.B) time.Duration {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		b.Fatal(err)
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	fields := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal …
	var busy int64
	for i, f := range fields[1:min(len(fields), 9)] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, _ := strconv.ParseInt(f, 10, 64)
		busy += n
	}
	return time.Duration(busy) * time.Second / 100
}

// tpDatabase reads the CPU of the benchmark database's backends: the
// server processes Postgres runs for the replicas' connections (the
// cluster runs on this machine, as the test cluster does).
type tpDatabase struct{ db *sql.DB }

func openTPDatabase(b *testing.B, url string) tpDatabase {
	db, err := sql.Open("pgx", url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return tpDatabase{db}
}

// cpu is the CPU time of the backends serving the database now, by
// process id, this reader's own left out.
func (d tpDatabase) cpu(b *testing.B) map[int]time.Duration {
	rows, err := d.db.QueryContext(context.Background(),
		`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	byPID := map[int]time.Duration{}
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			b.Fatal(err)
		}
		byPID[pid] = procCPU(b, pid)
	}
	return byPID
}

// since is what the backends spent between two readings: a backend born
// in between counts from its start; one that ended is left out (the
// replicas' pools keep their connections open for minutes, so few do).
func since(before, after map[int]time.Duration) time.Duration {
	var sum time.Duration
	for pid, t := range after {
		sum += t - before[pid]
	}
	return sum
}
