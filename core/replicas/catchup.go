package replicas

import (
	"context"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
)

// Catching up. The backplane loses what is sent while a replica's
// listening connection is down, so a mirrored run can miss events. Each
// replica keeps, for every run it mirrors, which replica numbers it; a
// hole (an event past the head) is asked of that replica, which answers
// with its events after the head; a listener that comes back asks for
// every mirrored run it holds open; a run quiet for a while is asked
// after too, so a lost ending does not leave watchers hanging. A replica
// that cannot answer (it is gone, or no longer holds the run) leaves the
// store to say how the run ended; what nothing can fill is an explicit
// run.gap.

// The kinds of message catching up adds.
const (
	kindFetch  = "fetch"  // a run's events after a seq, asked of the replica numbering it
	kindEvents = "events" // the answer: the events, or a refusal (not_found: not held)
)

// Catch-up timings.
const (
	// fillWait is how long a fetch waits for its answer before the store
	// is asked; a run still running there is asked after again (its
	// replica may have been reconnecting too), up to fillTries times
	// before the hole is given up on.
	fillWait  = 3 * time.Second
	fillTries = 3
	// quietAfter is how long a mirrored run may say nothing before its
	// replica is asked whether it missed something.
	quietAfter = 10 * time.Second
	// catchUpEvery is how often the waits are checked.
	catchUpEvery = time.Second
)

// RunFinder reads a run's row: where a run's replica cannot say how it
// ended, the store can (ports.RunStore).
type RunFinder interface {
	FindRun(ctx context.Context, id string) (domain.Run, error)
}

// mirrorState is what this replica knows of one run it mirrors.
type mirrorState struct {
	origin string    // the replica numbering it
	heard  time.Time // when it last sent something
	asked  time.Time // when a fetch went out still unanswered (zero: none)
	tries  int       // fetches gone unanswered in a row
}

// mirrors tracks the runs a replica mirrors.
type mirrors struct {
	mu   sync.Mutex
	runs map[string]*mirrorState
}

// heard notes that origin, the replica numbering run, just sent of it.
func (m *mirrors) heard(run, origin string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.runs[run]
	if st == nil {
		st = &mirrorState{}
		m.runs[run] = st
	}
	st.origin, st.heard = origin, time.Now()
}

// forget drops a run that ended here (or is held no more): nothing is
// asked of it again.
func (m *mirrors) forget(run string) {
	m.mu.Lock()
	delete(m.runs, run)
	m.mu.Unlock()
}

// mirrorEvent files an event another replica sent, asking for what a hole
// before it lacks.
func (l *Link) mirrorEvent(to Deliveries, m message) {
	after, lacking := to.Hub.Mirror(m.Run, m.Session, m.Owner, *m.Event)
	if info, held := to.Hub.Info(m.Run); held && info.Live {
		l.mirrors.heard(m.Run, m.From)
	} else {
		l.mirrors.forget(m.Run)
	}
	if lacking {
		l.fetch(m.Run, after)
	}
}

// fetch asks the replica numbering run for its events after seq (once
// at a time per run).
func (l *Link) fetch(run string, after int64) {
	l.mirrors.mu.Lock()
	st := l.mirrors.runs[run]
	if st == nil || !st.asked.IsZero() {
		l.mirrors.mu.Unlock()
		return
	}
	st.asked = time.Now()
	origin := st.origin
	l.mirrors.mu.Unlock()
	l.send(message{Kind: kindFetch, To: origin, Run: run, After: after})
}

// answerFetch answers another replica's fetch from this hub.
func (l *Link) answerFetch(to Deliveries, m message) {
	reply := message{Kind: kindEvents, To: m.From, Run: m.Run, After: m.After}
	if evs, ok := to.Hub.Since(m.Run, m.After); ok {
		reply.Events = evs
	} else {
		reply.Code = errs.NotFound
	}
	l.send(reply)
}

// filed files a fetch's answer; a replica that does not hold the run
// leaves it to the store.
func (l *Link) filed(ctx context.Context, to Deliveries, m message) {
	l.mirrors.mu.Lock()
	st := l.mirrors.runs[m.Run]
	if st != nil {
		st.asked, st.heard, st.tries = time.Time{}, time.Now(), 0
	}
	l.mirrors.mu.Unlock()
	if st == nil {
		return // concluded meanwhile
	}
	if m.Code != "" {
		go l.settleFromStore(ctx, to, m.Run)
		return
	}
	to.Hub.Fill(m.Run, m.Events)
	if info, held := to.Hub.Info(m.Run); !held || !info.Live {
		l.mirrors.forget(m.Run)
	}
}

// settleFromStore files what the store says of a run its replica does not
// hold, or did not answer for: its ending, when it has one (after a
// run.gap for what this replica never heard); otherwise it asks the run's
// replica again, and once the tries are spent files the held events after
// a gap — the run goes on, or its replica's failover will end it.
func (l *Link) settleFromStore(ctx context.Context, to Deliveries, runID string) {
	info, held := to.Hub.Info(runID)
	if !held || !info.Live {
		l.mirrors.forget(runID)
		return
	}
	head := info.LastSeq
	if to.Stored != nil {
		run, err := to.Stored.FindRun(ctx, runID)
		if err == nil {
			if ending, ended := hub.StoredEnding(run, head); ended {
				to.Hub.Fill(runID, ending)
				l.mirrors.forget(runID)
				return
			}
		} else if errs.Is(err, errs.NotFound) {
			// The run is gone with its session: end the stream as the
			// failover would, cancelled.
			gone := domain.NewEvent(domain.EventCancelled, domain.CancelledPayload{RunID: runID, Reason: "session_deleted"})
			gone.Seq = head + 1
			to.Hub.Fill(runID, []domain.Event{gone})
			l.mirrors.forget(runID)
			return
		} else if ctx.Err() == nil {
			l.log.Warn("reading a mirrored run's row failed; asking again later", "run_id", runID, "err", err)
			return
		}
	}
	if l.again(runID) {
		l.askAfter(to, runID)
		return
	}
	to.Hub.Skip(runID)
}

// again counts one more fetch of runID gone unanswered, and reports
// whether it may be asked again (fillTries).
func (l *Link) again(runID string) bool {
	l.mirrors.mu.Lock()
	defer l.mirrors.mu.Unlock()
	st := l.mirrors.runs[runID]
	if st == nil || st.tries >= fillTries {
		return false
	}
	st.tries++
	return true
}

// late handles a fetch unanswered past fillWait: the run's replica is
// asked again — it may have been reconnecting when the fetch went out,
// and it holds every event still — and only once the tries are spent does
// the store say how the run ended.
func (l *Link) late(ctx context.Context, to Deliveries, runID string) {
	if l.again(runID) {
		l.askAfter(to, runID)
		return
	}
	l.settleFromStore(ctx, to, runID)
}

// catchUp checks the waits until ctx ends: a fetch unanswered past
// fillWait goes to the store; a run quiet past quietAfter is asked after.
func (l *Link) catchUp(ctx context.Context, to Deliveries) {
	Every(ctx, catchUpEvery, func(ctx context.Context) {
		now := time.Now()
		var late, quiet []string
		l.mirrors.mu.Lock()
		for run, st := range l.mirrors.runs {
			switch {
			case !st.asked.IsZero() && now.Sub(st.asked) > fillWait:
				st.asked = time.Time{}
				late = append(late, run)
			case st.asked.IsZero() && now.Sub(st.heard) > quietAfter:
				quiet = append(quiet, run)
			}
		}
		l.mirrors.mu.Unlock()
		for _, run := range late {
			l.late(ctx, to, run)
		}
		for _, run := range quiet {
			l.askAfter(to, run)
		}
	})
}

// askAfter asks run's replica for what followed this replica's head.
func (l *Link) askAfter(to Deliveries, run string) {
	info, held := to.Hub.Info(run)
	if !held || !info.Live {
		l.mirrors.forget(run)
		return
	}
	l.fetch(run, info.LastSeq)
}

// rejoined asks after every run mirrored here: while the listener was
// down, anything may have been missed, endings included.
func (l *Link) rejoined(to Deliveries) {
	l.mirrors.mu.Lock()
	runs := make([]string, 0, len(l.mirrors.runs))
	for run, st := range l.mirrors.runs {
		st.asked = time.Time{}
		runs = append(runs, run)
	}
	l.mirrors.mu.Unlock()
	for _, run := range runs {
		l.askAfter(to, run)
	}
}
