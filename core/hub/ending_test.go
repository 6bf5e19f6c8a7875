package hub

import (
	"testing"

	"github.com/agents-server/agents-server/core/domain"
)

func TestStoredEndingFillsTheGapUpToTheRowsEnding(t *testing.T) {
	run := domain.Run{ID: "r1", Status: domain.RunCompleted, FinalOutput: "done", LastSeq: 5}
	evs, ok := StoredEnding(run, 2)
	if !ok || len(evs) != 2 || evs[0].Type != domain.EventGap || evs[1].Type != domain.EventOutput || evs[1].Seq != 5 {
		t.Fatalf("StoredEnding = %+v, %v; want a gap, then run.output at seq 5", evs, ok)
	}
	// A crash lost the count: the ending goes just past the cursor, with
	// nothing missing before it.
	run = domain.Run{ID: "r2", Status: domain.RunError, ErrorCode: domain.CodeServerRestarted, LastSeq: 3}
	evs, ok = StoredEnding(run, 7)
	if !ok || len(evs) != 1 || evs[0].Type != domain.EventError || evs[0].Seq != 8 {
		t.Fatalf("StoredEnding past the row's seq = %+v, %v; want run.error at seq 8 alone", evs, ok)
	}
	for _, st := range []domain.RunStatus{domain.RunRunning, domain.RunInterrupted} {
		if _, ok := StoredEnding(domain.Run{ID: "r3", Status: st}, 0); ok {
			t.Fatalf("a %s run has a stored ending", st)
		}
	}
}
