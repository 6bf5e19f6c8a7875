package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/ports"
)

// CompactPrefix starts a summary call's input, so a scripted model can
// tell it apart from the conversation.
const CompactPrefix = "Summarize this conversation so far: "

// compactionInstructions are the summarizer's unless the agent sets
// compaction_prompt.
const compactionInstructions = "You compress a conversation for the assistant that will continue it without seeing it. " +
	"Write a faithful summary: the person's goals and constraints, decisions made, facts and results found (names, " +
	"paths, numbers, commands), work done and work still open. Keep what the assistant needs to go on; drop chatter. " +
	"Answer with the summary only."

// FoldRequest is one compaction pass over a session with an agent's
// settings.
type FoldRequest struct {
	SessionID string
	// RunID is the run the checkpoint entry belongs to ("" for none).
	RunID    string
	Agent    domain.Agent
	Endpoint ports.ProviderEndpoint
	// Force skips the threshold: the pass folds whatever lies past the
	// kept window.
	Force bool
	// Trace opens the summary call's span before the call and returns what
	// closes it with the summary; nil records none.
	Trace func(model string, entries int) (finish func(summary string, err error))
	// Progress hears started and finished, with a detail.
	Progress func(phase, detail string)
}

// Folded is how a pass went: whether it folded, and the conversation's
// estimate before and after.
type Folded struct {
	Done          bool
	Before, After int64
}

// errNoSummary fails a compaction whose model answered without text: the
// model's fault, said in words like any model failure.
var errNoSummary = errs.E(errs.Unavailable, "the compaction model returned no summary")

// Fold runs one compaction pass: past the threshold (or always, forced),
// the prefix older than the kept window is summarized by the compaction
// model and folded under the summary. A pass with nothing to fold, or that
// another pass beat, folds nothing. Returns the summary call's failure or
// the store's.
func (s *Service) Fold(ctx context.Context, r FoldRequest) (Folded, error) {
	a := r.Agent
	if !r.Force {
		if due, err := s.d.Sessions.CompactionDue(ctx, r.SessionID, a.Compaction.Threshold()); err != nil || !due {
			return Folded{}, err
		}
	}
	plan, err := s.d.Sessions.PlanFold(ctx, r.SessionID, a.Compaction.KeptWindow())
	if err != nil || plan.Empty() {
		return Folded{}, err
	}
	r.Progress("started", "")
	model := a.Compaction.Model
	if model == "" {
		model = a.Model
	}
	instructions := a.Compaction.Prompt
	if instructions == "" {
		instructions = compactionInstructions
	}
	transcript := sessions.FoldTranscript(plan.Entries)
	var finish func(string, error)
	if r.Trace != nil {
		finish = r.Trace(model, len(plan.Entries))
	}
	resp, err := s.d.LLM.Generate(ctx, ports.ModelRequest{Endpoint: r.Endpoint, Model: model, Instructions: instructions,
		Input: []json.RawMessage{domain.TextMessage("user", "input_text", CompactPrefix+transcript)}, ConversationID: r.SessionID}, nil)
	summary := FinalText(resp.Output)
	if err == nil && summary == "" {
		err = errNoSummary
	}
	if finish != nil {
		finish(summary, err)
	}
	if err != nil {
		// The vendor's words (or why the answer was unusable), as the model
		// list and the playground say them: "internal server error" told
		// nobody why a compaction failed.
		msg, _ := vendorError(err)
		r.Progress("finished", "failed: "+msg)
		return Folded{}, err
	}
	checkpoint := domain.Entry{Kind: domain.KindCompaction, Source: domain.SourceCompaction, RunID: r.RunID,
		Checkpoint: &domain.Checkpoint{Summary: summary}}
	out := Folded{Before: plan.BeforeTokens, After: plan.AfterTokens(checkpoint)}
	detail := fmt.Sprintf("~%s → ~%s", kTokens(out.Before), kTokens(out.After))
	checkpoint.Display = &domain.Display{Kind: "compaction", Title: "Conversation compacted", Summary: detail,
		Extra: map[string]string{"folded": fmt.Sprint(len(plan.Entries)), "before_tokens": fmt.Sprint(out.Before),
			"after_tokens": fmt.Sprint(out.After)}}
	if _, err = s.d.Sessions.ApplyFold(ctx, r.SessionID, plan, checkpoint); errs.Is(err, errs.Conflict) {
		r.Progress("finished", "another compaction got there first")
		return Folded{}, nil
	} else if err != nil {
		return Folded{}, err
	}
	out.Done = true
	r.Progress("finished", detail)
	return out, nil
}

// kTokens writes a token count as people read it: 12.3k, 850.
func kTokens(n int64) string {
	if n < 1000 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%.1fk", float64(n)/1000)
}

// Compact forces one pass over a session of the caller's, as the context
// panel's "Compact now" does: the threshold is skipped, the kept window and
// the pairing and summary guards are not. It reports whether anything was
// folded. Returns not_found, conflict while a run holds the session, or
// validation when the session's agent has compaction off or no usable
// provider.
func (s *Service) Compact(ctx context.Context, p domain.Principal, sessionID string) (bool, error) {
	sess, err := s.d.Sessions.Get(ctx, p, sessionID)
	if err != nil {
		return false, err
	}
	if sess.AgentConfigID == "" {
		return false, errs.E(errs.Validation, "the session has no agent, so nothing says how to compact it")
	}
	a, err := s.d.Config.FindAgent(ctx, sess.AgentConfigID)
	if errs.Is(err, errs.NotFound) {
		return false, errs.E(errs.Validation, "the session's agent no longer exists")
	}
	if err != nil {
		return false, err
	}
	if !a.Compaction.Enabled {
		return false, errs.E(errs.Validation, "compaction is off for agent %q: turn compaction_enabled on in its settings", a.Name)
	}
	ep, err := s.requestEndpoint(ctx, a.ProviderID, a.Name)
	if err != nil {
		return false, err
	}
	release, err := s.d.Slots.Hold(sessionID)
	if err != nil {
		return false, err
	}
	defer release()
	charged := ports.WithUsageCall(ctx, ports.UsageCall{Kind: domain.UsageCompaction, UserID: p.User.ID, AgentID: a.ID, SessionID: sessionID})
	f, err := s.Fold(charged, FoldRequest{SessionID: sessionID, Agent: a, Endpoint: ep, Force: true, Progress: func(string, string) {}})
	var me *ports.ModelError
	if errors.As(err, &me) {
		return false, errs.Wrap(errs.Unavailable, err, "the compaction model failed: %s", me.Error())
	}
	return f.Done, err
}
