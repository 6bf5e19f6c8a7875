package tasks

import "sync"

// noTaskRuns remembers, from a run's Ending to its Ended, that the run is
// no task's attempt (a chat run, a wake-up): a run's id is minted for it —
// a task reserves its attempt's id before the run starts — so no task can
// name it later, and Ended need not look again.
type noTaskRuns struct {
	mu   sync.Mutex
	runs map[string]struct{}
}

// noTaskRunsKept bounds what is remembered: an Ending whose run's end was
// not recorded (a lost race) is never followed by Ended, and forgetting
// only costs Ended a lookup.
const noTaskRunsKept = 1024

// note remembers that runID is no task's attempt.
func (n *noTaskRuns) note(runID string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.runs == nil || len(n.runs) >= noTaskRunsKept {
		n.runs = map[string]struct{}{}
	}
	n.runs[runID] = struct{}{}
}

// take reports whether runID was noted, and forgets it.
func (n *noTaskRuns) take(runID string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.runs[runID]
	delete(n.runs, runID)
	return ok
}
