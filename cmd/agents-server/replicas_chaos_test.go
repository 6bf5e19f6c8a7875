package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/internal/testenv"
)

// The replica chaos suite: two real replicas on a Postgres cluster of the
// suite's own (so it can be stopped and restarted without disturbing the
// other suites' cluster), each fault applied while a run streams from one
// replica and is watched from both. After each fault: every watcher saw
// every event once, in order, or an explicit run.gap followed by the rest;
// the run has one final status, the same in every watcher's final event
// and in GET /runs/:id on both replicas; the conversation takes a new run;
// and nothing more is written for the run afterwards.

// privatePG is a Postgres cluster a suite owns: its own data dir and port.
type privatePG struct {
	dir, bin string
	port     int
	admin    string // a URL of its postgres database
}

// startPrivatePG starts a cluster with the project's script (which needs
// Debian's postgresql: the same as the shared test cluster, so the suite
// runs where that one does).
func startPrivatePG(t *testing.T) *privatePG {
	t.Helper()
	if pgtest.Available() == "" {
		testenv.Require(t, "replica chaos suite", pgtest.Env+" is not set (no Postgres installed for tests)", pgtest.Enable)
	}
	dir, err := os.MkdirTemp("", "agents-chaos-pg-")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	if len(bins) == 0 {
		t.Fatal("no /usr/lib/postgresql/*/bin although a test cluster is set")
	}
	pg := &privatePG{dir: dir, bin: bins[len(bins)-1], port: port,
		admin: fmt.Sprintf("postgres://agents@127.0.0.1:%d/postgres?sslmode=disable", port)}
	t.Cleanup(func() {
		pg.script(t, "down.sh")
		os.RemoveAll(dir)
	})
	pg.script(t, "up.sh")
	return pg
}

// script runs one of scripts/postgres on this cluster.
func (pg *privatePG) script(t *testing.T, name string) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "postgres", name))
	cmd.Env = append(os.Environ(), "AGENTS_POSTGRES_DIR="+pg.dir, "AGENTS_POSTGRES_PORT="+strconv.Itoa(pg.port))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

// pgCtl runs pg_ctl on the cluster, as its owner.
func (pg *privatePG) pgCtl(t *testing.T, args ...string) {
	t.Helper()
	args = append([]string{"-D", filepath.Join(pg.dir, "data"), "-w", "-t", "60"}, args...)
	cmd := exec.Command(filepath.Join(pg.bin, "pg_ctl"), args...)
	if os.Getuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(pg.bin, "pg_ctl")}, args...)...)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pg_ctl %v: %v\n%s", args, err, out)
	}
}

func (pg *privatePG) stop(t *testing.T)  { pg.pgCtl(t, "-m", "fast", "stop") }
func (pg *privatePG) start(t *testing.T) { pg.script(t, "up.sh") }
func (pg *privatePG) restart(t *testing.T) {
	// The server it starts again writes to its log, not to pg_ctl's output
	// (which would hold this call open for as long as the server runs).
	pg.pgCtl(t, "-m", "fast", "-l", filepath.Join(pg.dir, "postgres.log"), "restart")
}

// database creates a database on the cluster and returns its URL.
func (pg *privatePG) database(t *testing.T, name string) string {
	t.Helper()
	db, err := sql.Open("pgx", pg.admin)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return strings.Replace(pg.admin, "/postgres?", "/"+name+"?", 1)
}

// orderedOnce checks a watcher's events: each follows the one before it
// (a merged stretch from its first_seq), a run.gap says exactly which
// numbers it stands for, and the last is the run's final event.
func orderedOnce(t *testing.T, where string, evs []domain.Event) {
	t.Helper()
	if len(evs) == 0 || !evs[len(evs)-1].Final() {
		t.Fatalf("%s: %d events, the last %s: the stream did not end", where, len(evs), typeAt(evs, len(evs)-1))
	}
	var head int64
	for i, ev := range evs {
		var p struct {
			FirstSeq int64 `json:"first_seq"`
			LastGood int64 `json:"last_good"`
			Next     int64 `json:"next"`
		}
		json.Unmarshal(ev.Payload, &p)
		first := ev.Seq
		switch {
		case ev.Type == domain.EventGap:
			if p.LastGood != head || (ev.Seq != 0 && ev.Seq != p.Next-1) {
				t.Fatalf("%s: event %d is a gap from %d to %d at seq %d after %d", where, i, p.LastGood, p.Next, ev.Seq, head)
			}
			head = p.Next - 1
			continue
		case p.FirstSeq > 0:
			first = p.FirstSeq
		}
		if first != head+1 {
			t.Fatalf("%s: event %d (%s) stands for %d…%d after %d: a hole, a repeat or a reorder", where, i, ev.Type, first, ev.Seq, head)
		}
		head = ev.Seq
	}
}

// finalStatus is the run status a final event says.
func finalStatus(ev domain.Event) string {
	switch ev.Type {
	case domain.EventOutput:
		return string(domain.RunCompleted)
	case domain.EventError:
		return string(domain.RunError)
	case domain.EventCancelled:
		return string(domain.RunCancelled)
	}
	return ev.Type
}

// chaosRig is two replicas on a private cluster, with an agent that
// streams for a few seconds and one that answers at once.
type chaosRig struct {
	pg            *privatePG
	url           string
	a, b          *process
	stream, quick string // agent ids
}

// newChaosRig starts a private cluster and servers on it (two replicas,
// or one server watched twice), with the agents the rounds use.
func newChaosRig(t *testing.T, replicas int) *chaosRig {
	pg := startPrivatePG(t)
	url := pg.database(t, "chaos")
	model, modelURL := startScripted(t)
	model.SetScript("stream", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{Text: strings.Repeat("abcd", 300), ChunkSize: 4, DelayMS: 25}}}}})
	model.SetScript("quick", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{Text: "fine"}}}}})
	rig := &chaosRig{pg: pg, url: url, a: startReplica(t, url)}
	rig.b = rig.a
	if replicas > 1 {
		rig.b = startReplica(t, url)
	}
	_, out, raw := rig.a.call(t, "POST", "/api/v1/providers", map[string]any{"name": "m", "base_url": modelURL + "/v1", "api_key": "k"})
	prov, _ := out["id"].(string)
	if prov == "" {
		t.Fatalf("provider: %s", raw)
	}
	for _, name := range []string{"stream", "quick"} {
		_, out, raw := rig.a.call(t, "POST", "/api/v1/agents", map[string]any{"name": name, "model": name, "provider_id": prov})
		id, _ := out["id"].(string)
		if id == "" {
			t.Fatalf("agent: %s", raw)
		}
		if name == "stream" {
			rig.stream = id
		} else {
			rig.quick = id
		}
	}
	return rig
}

// TestASingleServerOnPostgresSurvivesItsDatabase: the same checks for one
// server alone on Postgres, whose database stops for 6 s mid-run.
func TestASingleServerOnPostgresSurvivesItsDatabase(t *testing.T) {
	t.Parallel()
	rig := newChaosRig(t, 1)
	rig.round(t, func(t *testing.T) {
		rig.pg.stop(t)
		time.Sleep(6 * time.Second)
		rig.pg.start(t)
	})
}

func TestReplicasSurviveTheirDatabase(t *testing.T) {
	t.Parallel()
	rig := newChaosRig(t, 2)
	pg, url := rig.pg, rig.url
	for _, fault := range []struct {
		name  string
		apply func(t *testing.T)
	}{
		{"the listeners terminated", func(t *testing.T) {
			if terminate(t, url, "LISTEN%") == 0 {
				t.Fatal("no listener to terminate")
			}
		}},
		{"pg_ctl restart -m fast", func(t *testing.T) { pg.restart(t) }},
		{"the database stopped for 6 s", func(t *testing.T) {
			pg.stop(t)
			time.Sleep(6 * time.Second)
			pg.start(t)
		}},
		{"the database stopped for 40 s", func(t *testing.T) {
			pg.stop(t)
			time.Sleep(40 * time.Second)
			pg.start(t)
		}},
		{"the running replica stopped past the bound", func(t *testing.T) {
			rig.a.cmd.Process.Signal(syscall.SIGSTOP)
			time.Sleep(2 * replicaFailover)
			rig.a.cmd.Process.Signal(syscall.SIGCONT)
		}},
	} {
		t.Run(fault.name, func(t *testing.T) { rig.round(t, fault.apply) })
	}
}

// round starts a streaming run on A watched from A and B, applies the
// fault once the watchers have seen it stream, and checks the outcome.
func (rig *chaosRig) round(t *testing.T, fault func(t *testing.T)) {
	var sid, runID string
	slowPoll(t, func() bool { // the previous round's outage may still be passing
		code, out, _ := rig.a.call(t, "POST", "/api/v1/sessions", map[string]any{"agent_config_id": rig.stream, "name": "s"})
		if code != 201 {
			return false
		}
		sid = out["id"].(string)
		code, out, _ = rig.a.call(t, "POST", "/api/v1/sessions/"+sid+"/runs", map[string]any{"input": "go"})
		runID, _ = out["run_id"].(string)
		return code == 201
	})
	fromA, fromB := rig.a.openSSE(t, runID, 0), rig.b.openSSE(t, runID, 0)
	var early []domain.Event
	for len(early) < 15 {
		ev, ok := fromB.next(t)
		if !ok {
			t.Fatal("B's stream ended before the fault")
		}
		early = append(early, ev.Event)
	}
	fault(t)
	watchers := map[string][]domain.Event{"A": eventsOf(t, fromA), "B": append(early, eventsOf(t, fromB)...)}
	var status string
	for where, evs := range watchers {
		orderedOnce(t, "the watcher on "+where, evs)
		got := finalStatus(evs[len(evs)-1])
		if status != "" && got != status {
			t.Fatalf("the watchers saw different endings: %s and %s", status, got)
		}
		status = got
	}
	// Every replica's row agrees with the watchers, and with the other's,
	// once it answers.
	rows := map[*process]map[string]any{}
	for _, p := range slices.Compact([]*process{rig.a, rig.b}) {
		slowPoll(t, func() bool {
			code, out, _ := p.call(t, "GET", "/api/v1/runs/"+runID, nil)
			rows[p] = out
			return code == 200
		})
		if rows[p]["status"] != status {
			t.Fatalf("GET /runs/%s on %s says %v; the watchers saw %s", runID, p.url, rows[p]["status"], status)
		}
	}
	if a, b := fmt.Sprint(rows[rig.a]["error"]), fmt.Sprint(rows[rig.b]["error"]); a != b {
		t.Fatalf("the replicas say the run failed differently: %s and %s", a, b)
	}
	t.Logf("the run ended %s %v", status, rows[rig.b]["error"])
	// The conversation takes the next run, on either replica.
	slowPoll(t, func() bool {
		code, _, _ := rig.b.call(t, "POST", "/api/v1/sessions/"+sid+"/runs", map[string]any{"input": "next", "agent_config_id": rig.quick})
		return code == 201
	})
	// Nothing more is written for the run: its row and the conversation's
	// entries of it stay as they are.
	entriesOf := func() int {
		_, _, raw := rig.b.call(t, "GET", "/api/v1/sessions/"+sid+"/messages", nil)
		var entries []map[string]any
		json.Unmarshal(raw, &entries)
		n := 0
		for _, e := range entries {
			if e["run_id"] == runID {
				n++
			}
		}
		return n
	}
	before := entriesOf()
	time.Sleep(3 * time.Second)
	for p, row := range rows {
		_, again, _ := p.call(t, "GET", "/api/v1/runs/"+runID, nil)
		if fmt.Sprint(again["status"], again["last_seq"], again["error"]) != fmt.Sprint(row["status"], row["last_seq"], row["error"]) {
			t.Fatalf("the run changed on %s after its end: %v → %v", p.url, row, again)
		}
	}
	if after := entriesOf(); after != before {
		t.Fatalf("the run's entries went from %d to %d after its end", before, after)
	}
}
