package replicas_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/remote"
	"github.com/agents-server/agents-server/core/replicas"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// network is an in-memory backplane shared by replicas: what one publishes
// reaches every listener, the publisher too, in the order it was sent —
// except a listener cut off (cut), which misses everything until it is
// back (restore).
type network struct {
	mu        sync.Mutex
	listeners map[string]*listener
}

// listener is one replica's listening end.
type listener struct {
	in   chan []byte
	ctl  chan bool // false: cut off; true: listening again
	deaf bool
}

// port is one replica's ports.Backplane on the network.
type port struct {
	net  *network
	name string
}

func (p port) Publish(payload []byte) {
	p.net.mu.Lock()
	defer p.net.mu.Unlock()
	for _, l := range p.net.listeners {
		if !l.deaf {
			l.in <- slices.Clone(payload)
		}
	}
}

func (p port) Listen(ctx context.Context, deliver func([]byte), listening func(up bool)) {
	l := &listener{in: make(chan []byte, 1024), ctl: make(chan bool, 1)}
	p.net.mu.Lock()
	if p.net.listeners == nil {
		p.net.listeners = map[string]*listener{}
	}
	p.net.listeners[p.name] = l
	p.net.mu.Unlock()
	defer func() {
		p.net.mu.Lock()
		delete(p.net.listeners, p.name)
		p.net.mu.Unlock()
	}()
	// A real backplane says it listens at first too; these replicas start
	// with nothing cached or mirrored, so the fake says it only when
	// told (restore, reconnect).
	for {
		select {
		case b := <-l.in:
			deliver(b)
		case up := <-l.ctl:
			listening(up)
		case <-ctx.Done():
			return
		}
	}
}

// cut makes name's listener miss what is sent until restore.
func (n *network) cut(name string) {
	n.mu.Lock()
	l := n.listeners[name]
	l.deaf = true
	n.mu.Unlock()
	l.ctl <- false
}

// restore has name's listener hear again, and tell its replica so.
func (n *network) restore(name string) {
	n.mu.Lock()
	l := n.listeners[name]
	l.deaf = false
	n.mu.Unlock()
	l.ctl <- true
}

func (port) Close() {}

var _ ports.Backplane = port{}

// executor is a replica's run engine: it records the commands it carries
// out and answers with err.
type executor struct {
	mu   sync.Mutex
	got  []remote.Command
	err  error
	hold chan struct{} // when set, a command waits for it
}

func (e *executor) Execute(ctx context.Context, cmd remote.Command) error {
	e.mu.Lock()
	e.got = append(e.got, cmd)
	err, hold := e.err, e.hold
	e.mu.Unlock()
	if hold != nil {
		<-hold
	}
	return err
}

func (e *executor) commands() []remote.Command {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.got)
}

// replica is one server process: its hub, its link, its log, its run
// engine, its open streams and its credential cache.
type replica struct {
	name    string
	net     *network
	hub     *hub.Hub
	link    *replicas.Link
	log     *porttest.Buffer
	exec    *executor
	streams *streams
	cache   *cache
}

// cluster starts replicas named names on one network, listening until
// the test's bubble ends.
func cluster(t *testing.T, ctx context.Context, names ...string) map[string]*replica {
	t.Helper()
	net := &network{}
	clock := porttest.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	out := map[string]*replica{}
	for _, name := range names {
		r := &replica{name: name, net: net, log: &porttest.Buffer{}, exec: &executor{}, streams: &streams{}, cache: &cache{}}
		r.link = replicas.New(name, port{net: net, name: name}, &porttest.IDs{}, slog.New(slog.NewTextHandler(r.log, nil)))
		r.hub = hub.New(hub.Options{}, clock, nil, r.link)
		go r.link.Listen(ctx, replicas.Deliveries{Hub: r.hub, Runs: r.exec, Streams: r.streams, Credentials: r.cache})
		out[name] = r
	}
	synctest.Wait() // every replica is listening
	return out
}

// follow reads a run's events on r until the stream ends.
func follow(t *testing.T, r *replica, runID string) []domain.Event {
	t.Helper()
	sub, err := r.hub.Subscribe(runID, 0)
	if err != nil {
		t.Fatalf("%s subscribes to %s: %v", r.name, runID, err)
	}
	defer sub.Close()
	var out []domain.Event
	for {
		ev, err := sub.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
}

// TestARunNumberedOnOneReplicaIsFollowedOnEvery holds the relay: each
// event a replica's hub numbers reaches the other replicas' hubs at the
// same seq, its owner's watchers there hear the run start, and an owner's
// notice reaches every replica's watchers.
func TestARunNumberedOnOneReplicaIsFollowedOnEvery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rs := cluster(t, ctx, "a", "b", "c")
		watchB := rs["b"].hub.Watch("ann")
		defer watchB.Close()

		a := rs["a"].hub
		if err := a.Claim("sess-1", "run-1", "ann"); err != nil {
			t.Fatal(err)
		}
		a.Publish("run-1", domain.NewEvent(domain.EventRunStarted, domain.RunStartedPayload{RunID: "run-1", SessionID: "sess-1", Input: "hi"}))
		a.Publish("run-1", domain.NewEvent(domain.EventMessage, map[string]string{"delta": "hello"}))
		a.Publish("run-1", domain.NewEvent(domain.EventOutput, map[string]string{"text": "hello"}))
		a.Notify("ann", domain.NewEvent(domain.EventTaskUpdated, map[string]string{"task_id": "t1"}))
		synctest.Wait()

		want := []string{"1 run.started", "2 run.message", "3 run.output"}
		for _, name := range []string{"b", "c"} {
			var got []string
			for _, ev := range follow(t, rs[name], "run-1") {
				got = append(got, fmt.Sprint(ev.Seq, " ", ev.Type))
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s followed %v, want %v", name, got, want)
			}
		}
		if got := watchB.Take(); !slices.Equal(got, []string{"run-1"}) {
			t.Errorf("ann's watcher on b heard of %v, want run-1", got)
		}
		if got := watchB.TakeNotices(); len(got) != 1 || got[0].Type != domain.EventTaskUpdated {
			t.Errorf("ann's watcher on b got notices %v", got)
		}
		if info, ok := rs["b"].hub.Info("run-1"); !ok || info.OwnerID != "ann" || info.SessionID != "sess-1" {
			t.Errorf("b knows the run as %+v, %v", info, ok)
		}
	})
}

// TestACommandRunsOnTheReplicaRunningItsRun holds Command: the command
// goes to the replica named, only there, and its answer — success, a
// coded refusal, an uncoded failure kept internal — comes back.
func TestACommandRunsOnTheReplicaRunningItsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rs := cluster(t, ctx, "a", "b", "c")
		cmd := remote.Command{Op: "cancel", RunID: "run-1", UserID: "ann", Mode: "immediate", Input: "stop", Why: "asked"}

		if err := rs["a"].link.Command(ctx, "b", cmd); err != nil {
			t.Fatalf("a command b carries out: %v", err)
		}
		synctest.Wait() // whatever else heard it has acted on it
		if got := rs["b"].exec.commands(); len(got) != 1 || got[0] != cmd {
			t.Fatalf("b carried out %+v, want %+v", got, cmd)
		}
		if got := rs["c"].exec.commands(); len(got) != 0 {
			t.Fatalf("c, not addressed, carried out %+v", got)
		}
		if got := rs["a"].exec.commands(); len(got) != 0 {
			t.Fatalf("the sender carried out its own command: %+v", got)
		}

		rs["b"].exec.err = errs.E(errs.Conflict, "run run-1 is not running")
		err := rs["a"].link.Command(ctx, "b", cmd)
		if errs.CodeOf(err) != errs.Conflict || errs.MessageOf(err) != "run run-1 is not running" {
			t.Fatalf("a refusal comes back as %v", err)
		}
		rs["b"].exec.err = errors.New("disk on fire at /var/lib/agents")
		err = rs["a"].link.Command(ctx, "b", cmd)
		if errs.CodeOf(err) != errs.Internal || strings.Contains(err.Error(), "disk") {
			t.Fatalf("an uncoded failure comes back as %v, want internal without its detail", err)
		}
	})
}

// TestACommandNobodyAnswersIsUnavailable holds that a command to a
// replica that does not answer — gone, or still starting — is
// unavailable within CommandTimeout, and that the caller leaving ends the
// wait at once.
func TestACommandNobodyAnswersIsUnavailable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rs := cluster(t, ctx, "a", "b")
		cmd := remote.Command{Op: "stop", RunID: "run-1"}

		began := time.Now()
		err := rs["a"].link.Command(ctx, "gone", cmd)
		if errs.CodeOf(err) != errs.Unavailable || time.Since(began) != replicas.CommandTimeout {
			t.Fatalf("a command to a gone replica: %v after %v, want unavailable after %v", err, time.Since(began), replicas.CommandTimeout)
		}

		// b is slow: the caller leaves first.
		rs["b"].exec.hold = make(chan struct{})
		callCtx, leave := context.WithCancel(ctx)
		go func() {
			time.Sleep(time.Second)
			leave()
		}()
		if err := rs["a"].link.Command(callCtx, "b", cmd); !errors.Is(err, context.Canceled) {
			t.Fatalf("a caller that left: %v", err)
		}
		close(rs["b"].exec.hold)
		synctest.Wait() // b's late answer finds no one waiting
	})
}

// TestAReplicaStillStartingRefusesCommands holds that a command reaching
// a replica listening with no run engine is answered unavailable.
func TestAReplicaStillStartingRefusesCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		net := &network{}
		clock := porttest.NewClock(time.Now())
		quiet := slog.New(slog.DiscardHandler)
		a := replicas.New("a", port{net: net, name: "a"}, &porttest.IDs{}, quiet)
		b := replicas.New("b", port{net: net, name: "b"}, &porttest.IDs{}, quiet)
		go a.Listen(ctx, replicas.Deliveries{Hub: hub.New(hub.Options{}, clock, nil, a)})
		go b.Listen(ctx, replicas.Deliveries{Hub: hub.New(hub.Options{}, clock, nil, b)}) // no run engine
		synctest.Wait()
		err := a.Command(ctx, "b", remote.Command{Op: "stop", RunID: "run-1"})
		if errs.CodeOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "starting") {
			t.Fatalf("a command to a starting replica: %v", err)
		}
	})
}

// TestAMalformedBackplaneMessageIsDropped holds that what is not a replica's
// message is dropped (a garbled body logged), and the link goes on.
func TestAMalformedBackplaneMessageIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rs := cluster(t, ctx, "a", "b")
		stray := port{net: rs["a"].net, name: "stray"} // a process that is no replica
		stray.Publish([]byte("no-space-at-all"))
		stray.Publish([]byte(`x {"kind":`))
		synctest.Wait()
		if !strings.Contains(rs["b"].log.String(), "a malformed backplane message was dropped") {
			t.Fatalf("b's log: %q", rs["b"].log.String())
		}
		if err := rs["a"].link.Command(ctx, "b", remote.Command{Op: "stop", RunID: "r"}); err != nil {
			t.Fatalf("the link after the garbage: %v", err)
		}
	})
}

// TestAReplicaThatMissedEventsCatchesUp holds the catch-up: a replica whose
// listener was cut off mid-run asks, once back, for what it missed, and
// its watchers see every event once, in order — those sent while it was
// away included, and the run's end.
func TestAReplicaThatMissedEventsCatchesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rs := cluster(t, ctx, "a", "b")
		a := rs["a"].hub
		if err := a.Claim("sess-1", "run-1", "ann"); err != nil {
			t.Fatal(err)
		}
		a.Publish("run-1", domain.NewEvent(domain.EventRunStarted, domain.RunStartedPayload{RunID: "run-1", SessionID: "sess-1"}))
		a.Publish("run-1", domain.NewEvent(domain.EventStep, domain.DeltaPayload{RunID: "run-1", Delta: "a"}))
		synctest.Wait()
		rs["b"].net.cut("b")
		synctest.Wait()
		for _, d := range []string{"b", "c", "d"} {
			a.Publish("run-1", domain.NewEvent(domain.EventMessage, domain.TextPayload{RunID: "run-1", Text: d}))
		}
		synctest.Wait()
		rs["b"].net.restore("b")
		synctest.Wait()
		a.Publish("run-1", domain.NewEvent(domain.EventOutput, domain.OutputPayload{RunID: "run-1"}))
		synctest.Wait()
		got := follow(t, rs["b"], "run-1")
		var seqs []int64
		for _, ev := range got {
			seqs = append(seqs, ev.Seq)
		}
		if !slices.Equal(seqs, []int64{1, 2, 3, 4, 5, 6}) || !got[len(got)-1].Final() {
			t.Fatalf("b followed %v; want 1…6 ending with the run's output", seqs)
		}
	})
}

// TestAHoleWhileListeningIsFilledFromTheRunsReplica: an event lost on the
// way (the sender's batch failed) leaves a hole the next event reveals;
// it is filled from the run's replica before anything after it is shown.
func TestAHoleWhileListeningIsFilledFromTheRunsReplica(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rs := cluster(t, ctx, "a", "b")
		a := rs["a"].hub
		_ = a.Claim("sess-1", "run-1", "ann")
		a.Publish("run-1", domain.NewEvent(domain.EventRunStarted, domain.RunStartedPayload{RunID: "run-1", SessionID: "sess-1"}))
		synctest.Wait()
		sub, err := rs["b"].hub.Subscribe("run-1", 0)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		rs["b"].net.cut("b")
		a.Publish("run-1", domain.NewEvent(domain.EventMessage, domain.TextPayload{RunID: "run-1", Text: "lost"}))
		synctest.Wait()
		// Back without being told (a lost batch, not a lost listener).
		rs["b"].net.mu.Lock()
		rs["b"].net.listeners["b"].deaf = false
		rs["b"].net.mu.Unlock()
		a.Publish("run-1", domain.NewEvent(domain.EventOutput, domain.OutputPayload{RunID: "run-1"}))
		synctest.Wait()
		var got []string
		for {
			ev, err := sub.Next(ctx)
			if err != nil {
				break
			}
			got = append(got, fmt.Sprint(ev.Seq, " ", ev.Type))
		}
		if want := []string{"1 run.started", "2 run.message", "3 run.output"}; !slices.Equal(got, want) {
			t.Fatalf("b's watcher saw %v, want %v", got, want)
		}
	})
}

// runRows is a store of run rows for a replica's Deliveries.
type runRows map[string]domain.Run

func (r runRows) FindRun(_ context.Context, id string) (domain.Run, error) {
	if run, ok := r[id]; ok {
		return run, nil
	}
	return domain.Run{}, errs.E(errs.NotFound, "run not found")
}

// TestAMirroredRunWhoseReplicaIsSilentEndsAsTheStoreSays: the replica
// numbering a run vanished (no answer to a fetch); once the wait is over,
// the run's row says how it ended, and the stream ends so, after a gap
// for what never arrived — no watcher hangs.
func TestAMirroredRunWhoseReplicaIsSilentEndsAsTheStoreSays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		net := &network{}
		clock := porttest.NewClock(time.Now())
		quiet := slog.New(slog.DiscardHandler)
		b := replicas.New("b", port{net: net, name: "b"}, &porttest.IDs{}, quiet)
		bh := hub.New(hub.Options{}, clock, nil, b)
		rows := runRows{"run-9": {ID: "run-9", Status: domain.RunError, ErrorCode: domain.CodePersistError, LastSeq: 7}}
		go b.Listen(ctx, replicas.Deliveries{Hub: bh, Stored: rows})
		synctest.Wait()
		// A replica "x" sends two events, then nothing: it is gone.
		x := port{net: net, name: "x"}
		for seq := int64(1); seq <= 2; seq++ {
			ev := domain.NewEvent(domain.EventStep, domain.DeltaPayload{RunID: "run-9", Delta: "d"})
			ev.Seq = seq
			body, _ := json.Marshal(map[string]any{"from": "x", "kind": "event", "run": "run-9", "session": "s", "owner": "ann", "event": ev})
			x.Publish(append([]byte("x "), body...))
		}
		synctest.Wait()
		sub, err := bh.Subscribe("run-9", 0)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		time.Sleep(15 * time.Second) // quiet, then asked, then the wait is over
		synctest.Wait()
		var got []string
		for {
			ev, err := sub.Next(ctx)
			if err != nil {
				break
			}
			got = append(got, fmt.Sprint(ev.Seq, " ", ev.Type))
		}
		if want := []string{"1 run.step", "2 run.step", "6 run.gap", "7 run.error"}; !slices.Equal(got, want) {
			t.Fatalf("the watcher saw %v, want %v", got, want)
		}
	})
}
