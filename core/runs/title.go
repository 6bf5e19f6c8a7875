package runs

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// titleBudget bounds the title call; a slow title never delays a run's end
// by more than this.
const titleBudget = 15 * time.Second

// titleSession names an untitled session from its first message, with the
// agent's own provider, in parallel with the run; the run waits for it
// (within titleBudget) before its final event, so session.title_updated
// reaches its watchers.
func (s *Service) titleSession(rc *runCtx) <-chan struct{} {
	done := make(chan struct{})
	// Read the agent now: a handoff replaces rc.agent while this runs.
	endpoint, model := rc.agent.Endpoint, s.d.Models.TitleModel(rc.lr.ctx, rc.agent.Agent.Model)
	charged := s.charged(rc.lr.gone, rc, domain.UsageTitle)
	// A cancelled run does not wait for its title, so the call is counted
	// with the runs: Shutdown waits for it, and a forced stop ends it,
	// before the store it writes to closes.
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(done)
		// A cancelled run still gets its title; a run stopped because its
		// session or owner is going away does not (liveRun.stop).
		ctx, cancel := context.WithTimeout(charged, titleBudget)
		defer cancel()
		defer context.AfterFunc(s.root, cancel)()
		sp := rc.tr.Span(domain.SpanTitle, "title", "").Meta("model", model)
		title, named, err := s.d.Models.Title(ctx, endpoint, model, rc.lr.run.Input, rc.lr.run.SessionID)
		sp.Set("title", title, true)
		sp.Finish(err)
		if err != nil || !named {
			s.d.Log.Debug("titling a session failed, or a person named it first", "session_id", rc.lr.run.SessionID, "err", err)
			return
		}
		s.publish(rc.lr, domain.EventTitleUpdated, domain.TitleUpdatedPayload{SessionID: rc.lr.run.SessionID, RunID: rc.lr.run.ID, Title: title})
	}()
	return done
}
