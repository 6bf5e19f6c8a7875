package runs

import (
	"context"

	"github.com/agents-server/agents-server/core/approvals"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/core/transcript"
	"github.com/agents-server/agents-server/ports"
)

// gates says which of a turn's calls wait for a person: those the agent's
// approve_tools names — except a shell command the session already trusts —
// a tool that always asks (unless its toolset refuses the call anyway,
// which the model hears at once), and a plan submitted while planning,
// always.
func (s *Service) gates(rc *runCtx, calls []domain.Item) []bool {
	out := make([]bool, len(calls))
	for i, c := range calls {
		if spec, ok := rc.agent.Offered(c.Name); ok && spec.AlwaysAsks {
			out[i] = !s.refuses(rc, c)
			continue
		}
		out[i] = (rc.planning && c.Name == tools.SubmitPlan.Name) ||
			domain.Gated(rc.agent.Agent.Approval.ApproveTools, c.Name) && !s.trust.Covers(rc.lr.run.SessionID, rc.lr.run.ID, c)
	}
	return out
}

// refuses asks the toolset of an always-asking tool whether it would
// refuse the call anyway.
func (s *Service) refuses(rc *runCtx, c domain.Item) bool {
	i, ok := rc.agent.Owner[c.Name]
	if !ok {
		return false
	}
	asker, ok := s.d.Toolsets[i].(tools.Asker)
	return ok && asker.Refuses(rc.lr.ctx, s.runCall(rc, i, c), c)
}

func anyTrue(bs []bool) bool {
	for _, b := range bs {
		if b {
			return true
		}
	}
	return false
}

// pause files the turn with what its resume needs (approvals.Desk.Pause);
// a pause that cannot be recorded ends the run as persist_error.
func (s *Service) pause(ctx context.Context, rc *runCtx, turn int, resp ports.ModelResponse, calls []domain.Item, gated []bool) outcome {
	lr := rc.lr
	now := s.d.Clock.Now()
	rows := approvals.Rows(lr.run, calls, gated, now, s.d.IDs.NewID)
	// From here on the run takes no injection (Inject refuses while it
	// pauses); what it took and has not read travels with the pause.
	lr.mu.Lock()
	lr.pausing.Store(true)
	var queued []domain.QueuedInput
	for _, in := range lr.queue {
		queued = append(queued, domain.QueuedInput{Queue: in.queue, Input: in.input})
	}
	lr.queue = nil
	lr.mu.Unlock()
	state := domain.PauseState{Turn: turn, AgentConfigID: rc.agent.Agent.ID, ToolChoice: rc.toolChoice, Planning: rc.planning,
		Injected: lr.injected, Calls: calls, Gated: gated, Queued: queued}
	if rc.agent.Agent.Model == lr.model { // no handoff took the run from the model chosen for it
		state.Model = lr.model
	}
	run := lr.run
	run.AgentConfigID, run.UpdatedAt = rc.agent.Agent.ID, now
	if err := s.desk.Pause(context.WithoutCancel(ctx), run, transcript.TurnEntries(run.ID, resp, nil), rows, state); err != nil {
		s.d.Log.Error("recording a pause failed", "run_id", run.ID, "err", err)
		return s.failed(lr, domain.CodePersistError, "the pause for approval could not be recorded: "+errs.MessageOf(err))
	}
	return outcome{status: domain.RunInterrupted, paused: true, pending: rows[0].ToolCallID}
}

// Approvals lists the caller's pending decisions: of one session, or (""),
// of all, with their previews (approvals.Service.List).
func (s *Service) Approvals(ctx context.Context, p domain.Principal, sessionID string) ([]domain.Approval, error) {
	return s.gate.List(ctx, p, sessionID)
}

// ApprovalByCall finds the caller's pending approval of a tool call
// (approvals.Service.ByCall).
func (s *Service) ApprovalByCall(ctx context.Context, p domain.Principal, toolCallID string) (domain.Approval, error) {
	return s.gate.ByCall(ctx, p, toolCallID)
}

// Decide approves or rejects a pending call; the last decision resumes
// the same run (approvals.Desk.Decide).
func (s *Service) Decide(ctx context.Context, p domain.Principal, approvalID string, approve bool, scope domain.ApprovalScope, reason string) (domain.Run, error) {
	return s.desk.Decide(ctx, p, approvalID, approve, scope, reason)
}

// ReapApprovals ends the runs whose approvals waited past
// approval_ttl_minutes (approvals.Desk.ReapApprovals).
func (s *Service) ReapApprovals(ctx context.Context) (int, error) { return s.desk.ReapApprovals(ctx) }

// ReopenPaused gives every paused run a live stream again after a restart
// (approvals.Desk.ReopenPaused).
func (s *Service) ReopenPaused(ctx context.Context) error { return s.desk.ReopenPaused(ctx) }

// resumeData is what a resumed run picks up.
type resumeData struct {
	state   domain.PauseState
	decided approvals.Decided
}
