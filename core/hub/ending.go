package hub

import "github.com/agents-server/agents-server/core/domain"

// StoredEnding is what a watcher holding cursor gets of a finished run from
// its row: a run.gap up to the terminal event, then that event (its seq the
// row's last_seq, or past the cursor when a crash lost the count). ok is
// false for a run that has not ended. Replay hands them over.
func StoredEnding(run domain.Run, cursor int64) ([]domain.Event, bool) {
	var final domain.Event
	switch run.Status {
	case domain.RunCompleted:
		final = domain.NewEvent(domain.EventOutput, domain.OutputPayload{RunID: run.ID, FinalOutput: run.FinalOutput})
	case domain.RunError:
		final = domain.NewEvent(domain.EventError, domain.ErrorPayload{RunID: run.ID, Code: run.ErrorCode, Message: run.ErrorMessage})
	case domain.RunCancelled:
		final = domain.NewEvent(domain.EventCancelled, domain.CancelledPayload{RunID: run.ID, Reason: run.ErrorCode})
	default:
		return nil, false
	}
	final.Seq = max(run.LastSeq, cursor+1)
	var out []domain.Event
	if missing := final.Seq - cursor - 1; missing > 0 {
		out = append(out, domain.NewEvent(domain.EventGap, domain.GapPayload{
			RunID: run.ID, Dropped: missing, LastGood: cursor, Next: final.Seq}))
	}
	return append(out, final), true
}
