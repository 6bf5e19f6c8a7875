package runs

import (
	"context"
	"time"
)

// DefaultCheckpointEvery is how often a streaming answer is recorded: at
// most this much of what a person watched arrive is lost to a crash.
const DefaultCheckpointEvery = time.Second

// checkpoint is when a run's streamed text was last recorded, and whether
// the record holds text that a whole answer must clear.
type checkpoint struct {
	at        time.Time
	holdsText bool
}

// begin starts a model call's interval: a call that answers within it
// writes nothing.
func (c *checkpoint) begin(now time.Time) { c.at = now }

// saveProgress records the run's last seq and the text the model call in
// flight has streamed, once per CheckpointEvery (now, when force), so the
// restart after a crash keeps it as a cut-short answer. A failed write
// costs only that safety net: the run goes on.
func (s *Service) saveProgress(rc *runCtx, force bool) {
	now := s.d.Clock.Now()
	if !force && now.Sub(rc.checkpoint.at) < s.d.CheckpointEvery {
		return
	}
	rc.checkpoint.at = now
	info, _ := s.d.Hub.Info(rc.lr.run.ID)
	text := rc.partial.String()
	rc.checkpoint.holdsText = text != ""
	if err := s.d.Runs.CheckpointRun(context.WithoutCancel(rc.lr.ctx), rc.lr.run.ID, info.LastSeq, text); err != nil {
		s.d.Log.Warn("recording a run's progress failed", "run_id", rc.lr.run.ID, "err", err)
	}
}
