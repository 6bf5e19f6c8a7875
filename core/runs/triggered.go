package runs

import (
	"context"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
)

// TriggeredTurn is a trigger's question to an agent in a conversation: the
// brief (with a webhook's payload) sent as a message of the conversation,
// after a note saying which trigger asked.
type TriggeredTurn struct {
	AgentConfigID string
	Input         string
	Note          domain.Entry
}

// StartTriggered sends a trigger's brief as a message of the owner's
// conversation, answered by the trigger's agent under the conversation's
// own sandbox binding. Unlike a person's message it abandons nothing: a
// conversation busy with a run, or waiting on an approval, refuses it. Its
// run uses only the grants made within it. Returns not_found (session),
// validation (the agent is gone or no longer the owner's to use), conflict
// (busy, paused, a task's conversation), rate_limited (max_runs_per_user)
// or unavailable (draining).
func (s *Service) StartTriggered(ctx context.Context, p domain.Principal, sessionID string, t TriggeredTurn) (domain.Run, error) {
	sess, err := s.d.Sessions.Get(ctx, p, sessionID)
	if err != nil {
		return domain.Run{}, err
	}
	if sess.IsTaskSession() {
		return domain.Run{}, errs.E(errs.Conflict, "this is a background task's conversation: a trigger reports into a conversation of its own")
	}
	if strings.TrimSpace(t.Input) == "" {
		return domain.Run{}, errs.Field("brief", "is required: it is the message the agent answers")
	}
	a, err := s.d.Config.FindAgent(ctx, t.AgentConfigID)
	if errs.Is(err, errs.NotFound) || (err == nil && !a.VisibleTo(p)) {
		return domain.Run{}, errs.Field("agent_config_id", "the trigger's agent no longer exists (or is no longer shared): point the trigger at another")
	}
	if err != nil {
		return domain.Run{}, err
	}
	limit, err := s.admit(ctx, p.User.ID)
	if err != nil {
		return domain.Run{}, err
	}
	if _, paused, err := s.d.Approvals.FindPausedRun(ctx, sessionID); err != nil {
		return domain.Run{}, err
	} else if paused {
		return domain.Run{}, errs.E(errs.Conflict, "the conversation waits on an approval; a trigger does not set it aside")
	}
	now := s.d.Clock.Now()
	run := domain.Run{ID: s.d.IDs.NewID(), SessionID: sessionID, OwnerID: p.User.ID, AgentConfigID: a.ID, Replica: s.d.Replica, SeqMark: hub.MarkAhead,
		ProjectID: sess.ProjectID, Input: t.Input, Status: domain.RunRunning, CreatedAt: now, UpdatedAt: now}
	if err := s.d.Hub.Claim(sessionID, run.ID, p.User.ID); err != nil {
		return domain.Run{}, err
	}
	s.trust.Triggered(run.ID)
	planning, err := s.d.Sessions.BeginRunWith(ctx, run, nil, []domain.Entry{t.Note, userEntry(t.Input, run.ID)}, capIn(ctx, run.OwnerID, limit, nil))
	if err != nil {
		s.d.Hub.Release(sessionID, run.ID)
		return domain.Run{}, err
	}
	s.launch(&liveRun{run: run, planning: planning, titleIt: sess.Name == "", taskSession: ptr(sess.IsTaskSession())})
	return run, nil
}
