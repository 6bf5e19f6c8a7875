package runs

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

// folded is how a pass went: whether it folded, and the conversation's
// estimate before and after.
type folded struct {
	done          bool
	before, after int64
}

// compact runs one compaction pass over a session with agent a's settings:
// past the threshold (or always, forced), the prefix older than the kept
// window is summarized by the compaction model and folded under the
// summary. progress hears started and finished. A pass with nothing to
// fold, or that another pass beat, folds nothing.
func (s *Service) compact(ctx context.Context, sessionID, runID string, a domain.Agent, ep ports.ProviderEndpoint, force bool,
	tr *tracer, parentSpan string, progress func(phase, detail string)) (folded, error) {
	if !force {
		if due, err := s.d.Sessions.CompactionDue(ctx, sessionID, a.Compaction.Threshold()); err != nil || !due {
			return folded{}, err
		}
	}
	plan, err := s.d.Sessions.PlanFold(ctx, sessionID, a.Compaction.KeptWindow())
	if err != nil || plan.Empty() {
		return folded{}, err
	}
	progress("started", "")
	model := a.Compaction.Model
	if model == "" {
		model = a.Model
	}
	instructions := a.Compaction.Prompt
	if instructions == "" {
		instructions = compactionInstructions
	}
	transcript := sessions.FoldTranscript(plan.Entries)
	var sp *openSpan
	if tr != nil {
		sp = tr.span(domain.SpanCompaction, "compaction", parentSpan).meta("model", model).meta("entries", len(plan.Entries))
	}
	resp, err := s.d.LLM.Generate(ctx, ports.ModelRequest{Endpoint: ep, Model: model, Instructions: instructions,
		Input: []json.RawMessage{domain.TextMessage("user", "input_text", CompactPrefix+transcript)}, ConversationID: sessionID}, nil)
	summary := finalText(resp.Output)
	if err == nil && summary == "" {
		err = errors.New("the compaction model returned no summary")
	}
	if sp != nil {
		sp.set("summary", summary, true)
		sp.finish(err)
	}
	if err != nil {
		progress("finished", "failed: "+errs.MessageOf(err))
		return folded{}, err
	}
	checkpoint := domain.Entry{Kind: domain.KindCompaction, Source: domain.SourceCompaction, RunID: runID,
		Checkpoint: &domain.Checkpoint{Summary: summary}}
	out := folded{before: plan.BeforeTokens, after: plan.AfterTokens(checkpoint)}
	detail := fmt.Sprintf("~%s → ~%s", kTokens(out.before), kTokens(out.after))
	checkpoint.Display = &domain.Display{Kind: "compaction", Title: "Conversation compacted", Summary: detail,
		Extra: map[string]string{"folded": fmt.Sprint(len(plan.Entries)), "before_tokens": fmt.Sprint(out.before),
			"after_tokens": fmt.Sprint(out.after)}}
	if _, err = s.d.Sessions.ApplyFold(ctx, sessionID, plan, checkpoint); errs.Is(err, errs.Conflict) {
		progress("finished", "another compaction got there first")
		return folded{}, nil
	} else if err != nil {
		return folded{}, err
	}
	out.done = true
	progress("finished", detail)
	return out, nil
}

// kTokens writes a token count as people read it: 12.3k, 850.
func kTokens(n int64) string {
	if n < 1000 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%.1fk", float64(n)/1000)
}

// compactTurn runs the turn boundary's pass for a run (forced after an
// overflow) and, when it folded, rebuilds the turn's input from the
// shrunk history.
func (s *Service) compactTurn(rc *runCtx, t *turnState, force bool) (folded, error) {
	a := rc.agent.agent
	if !a.Compaction.Enabled {
		return folded{}, nil
	}
	lr := rc.lr
	f, err := s.compact(lr.ctx, lr.run.SessionID, lr.run.ID, a, rc.agent.endpoint, force, rc.tr, rc.parentSpan(),
		func(phase, detail string) {
			s.publish(lr, domain.EventCompaction, domain.CompactionPayload{RunID: lr.run.ID, Phase: phase, Detail: detail})
		})
	if err != nil || !f.done {
		return f, err
	}
	history, err := s.d.Sessions.History(lr.ctx, lr.run.SessionID)
	if err != nil {
		return f, err
	}
	t.input = sessions.ModelInput(history)
	return f, nil
}

// generateFitting makes the turn's model call; when the provider says the
// input overflows its window, a forced pass folds the history and the turn
// is tried once more — only if the history got strictly lighter (no turn
// budget spent). Otherwise the overflow ends the run.
func (s *Service) generateFitting(rc *runCtx, t *turnState) (ports.ModelResponse, error) {
	resp, err := s.generate(rc.lr.ctx, rc, s.request(rc, t.input))
	var me *ports.ModelError
	if err == nil || !errors.As(err, &me) || me.Kind != ports.ModelOverflow || !rc.agent.agent.Compaction.Enabled {
		return resp, err
	}
	s.diagnostic(rc, "context_overflow", "upstream", "The model's context window overflowed: compacting the conversation and trying the turn again.", nil)
	f, cerr := s.compactTurn(rc, t, true)
	if cerr != nil {
		return resp, cerr
	}
	if !f.done || f.after >= f.before {
		return resp, err
	}
	return s.generate(rc.lr.ctx, rc, s.request(rc, t.input))
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
	release, err := s.d.Hub.Hold(sessionID)
	if err != nil {
		return false, err
	}
	defer release()
	f, err := s.compact(ctx, sessionID, "", a, ep, true, nil, "", func(string, string) {})
	var me *ports.ModelError
	if errors.As(err, &me) {
		return false, errs.Wrap(errs.Unavailable, err, "the compaction model failed: %s", me.Error())
	}
	return f.done, err
}
