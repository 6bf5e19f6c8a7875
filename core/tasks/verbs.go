package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/tools"
)

// maxResultChars bounds the result a report hands the model; the whole
// result stays on the task.
const maxResultChars = 16 << 10

// VerbCall is a task verb as a chat run called it.
type VerbCall struct {
	Run       domain.Run
	Agent     domain.Agent // the agent that called it (after any handoff)
	CallID    string
	Name      string
	Arguments string
	// Triggered: a trigger started the calling run, so what it starts
	// keeps its exec grants to itself too.
	Triggered bool
}

// Verbs is the task verbs as a run's toolset: the model's whole vocabulary
// for background work.
func (m *Manager) Verbs() tools.Toolset { return verbs{m} }

type verbs struct{ m *Manager }

// Offer gives a chat run's agent the task verbs unless it turns
// behavior.subagents off; a task's own run never gets them (depth 1).
// spawn_task's description lists the workflows on offer.
func (v verbs) Offer(ctx context.Context, r tools.Request) (tools.Offer, error) {
	a := r.Agent
	if r.Background || (a.Behavior.Subagents != nil && !*a.Behavior.Subagents) {
		return tools.Offer{}, nil
	}
	o := tools.Offer{Specs: make([]tools.Spec, 0, len(tools.Tasks))}
	for _, spec := range tools.Tasks {
		if spec.Name == tools.SpawnTask.Name {
			if offer := v.m.SpawnSpec(ctx, r.Run.OwnerID); offer != "" {
				spec.Description += "\n\n" + offer
			}
		}
		o.Specs = append(o.Specs, spec)
	}
	return o, nil
}

// Call answers a task verb.
func (v verbs) Call(ctx context.Context, rc tools.RunCall, call domain.Item) tools.Answer {
	return v.m.Call(ctx, VerbCall{Run: rc.Run, Agent: rc.Agent, CallID: call.CallID, Name: call.Name, Arguments: call.Arguments,
		Triggered: rc.Triggered})
}

// Call answers a task verb for the calling run's conversation.
func (m *Manager) Call(ctx context.Context, c VerbCall) tools.Answer {
	var a tools.Answer
	var err error
	switch c.Name {
	case tools.SpawnTask.Name:
		a, err = m.spawnVerb(ctx, c)
	case tools.TaskStatus.Name:
		a, err = m.statusVerb(ctx, c)
	case tools.TaskRetry.Name, tools.TaskStop.Name:
		a, err = m.actVerb(ctx, c)
	default:
		err = errs.E(errs.Validation, "%s is not a task verb", c.Name)
	}
	if err != nil {
		return tools.Answer{IsError: true, Output: "Error: " + errs.MessageOf(err)}
	}
	return a
}

func (m *Manager) spawnVerb(ctx context.Context, c VerbCall) (tools.Answer, error) {
	t, err := m.spawn(ctx, c)
	if err != nil {
		return tools.Answer{}, err
	}
	how := "It is working now"
	if t.Queued() {
		how = "It waits for a free slot (this conversation is at its live-task cap) and starts when one ends"
	}
	out := fmt.Sprintf("Started background task %s (%q). %s. Its result will come to you as a [task-notification] message "+
		"when it ends; meanwhile do not do its work yourself. task_status(task_id) waits for it if you need the result now.", t.ID, t.Label, how)
	return tools.Answer{Output: out, Display: card(t)}, nil
}

// card is a task's tool card: what the task is and how it stands.
func card(t domain.Task) *domain.Display {
	return &domain.Display{Kind: "task", Title: t.Label, Summary: t.Summary,
		Extra: map[string]string{"task_id": t.ID, "task_status": string(t.Status), "task_summary_attempt": fmt.Sprint(t.Attempt)}}
}

type taskArgs struct {
	TaskID string `json:"task_id"`
}

func parseTaskArgs(c VerbCall, required bool) (string, error) {
	var args taskArgs
	if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
		return "", errs.E(errs.Validation, "%s takes {\"task_id\": …}: %v", c.Name, err)
	}
	if required && args.TaskID == "" {
		return "", errs.E(errs.Validation, "%s needs a task_id: task_status() lists this conversation's tasks", c.Name)
	}
	return args.TaskID, nil
}

// statusVerb reports one task — waiting up to TaskStatusWait for a live
// one to change — or lists every task of the conversation. A report that
// hands over a final result settles that task's wake-up debt: the model
// has read it, so no notification repeats it.
func (m *Manager) statusVerb(ctx context.Context, c VerbCall) (tools.Answer, error) {
	id, err := parseTaskArgs(c, false)
	if err != nil {
		return tools.Answer{}, err
	}
	if id == "" {
		list, err := m.d.Store.ListSessionTasks(ctx, c.Run.SessionID)
		if err != nil {
			return tools.Answer{}, err
		}
		if len(list) == 0 {
			return tools.Answer{Output: "This conversation has no background tasks."}, nil
		}
		var b strings.Builder
		fmt.Fprintf(&b, "This conversation's background tasks, newest first:\n")
		for _, t := range list {
			b.WriteString(line(t))
		}
		return tools.Answer{Output: b.String()}, nil
	}
	t, err := m.waitChange(ctx, c.Run.OwnerID, c.Run.SessionID, id)
	if err != nil {
		return tools.Answer{}, err
	}
	if !t.Status.Terminal() {
		return tools.Answer{Output: line(t) + "It is still working after a " + domain.TaskStatusWait.String() +
			" wait; its result will come as a [task-notification]. Do not redo its work.", Display: card(t)}, nil
	}
	m.settleTask(ctx, t)
	return tools.Answer{Output: line(t) + "Result:\n" + clip(t.Result), Display: card(t)}, nil
}

// waitChange returns a task of the session once its status moved, or
// after TaskStatusWait if it is still live as it was.
func (m *Manager) waitChange(ctx context.Context, ownerID, sessionID, id string) (domain.Task, error) {
	timer := time.NewTimer(domain.TaskStatusWait)
	defer timer.Stop()
	var first domain.TaskStatus
	for {
		changed := m.changes(id) // before the read: no change slips between
		t, err := m.ownedWithin(ctx, ownerID, id, sessionID)
		if first == "" {
			first = t.Status
		}
		if err != nil || t.Status.Terminal() || t.Status != first {
			return t, err
		}
		select {
		case <-changed:
		case <-timer.C:
			return t, nil
		case <-ctx.Done():
			return t, ctx.Err()
		}
	}
}

// settleTask marks a task's due debts paid.
func (m *Manager) settleTask(ctx context.Context, t domain.Task) {
	due, err := m.d.Store.DueWakeups(ctx, t.ParentSessionID)
	if err != nil {
		m.logErr("reading due wake-ups failed", err, "session_id", t.ParentSessionID)
		return
	}
	var ids []string
	for _, w := range due {
		if w.TaskID == t.ID {
			ids = append(ids, w.ID)
		}
	}
	m.logErr("settling wake-ups failed", m.d.Store.SettleWakeups(ctx, ids, m.d.Clock.Now()), "task_id", t.ID)
}

// line is one task in a report.
func line(t domain.Task) string {
	s := fmt.Sprintf("- %s %q: %s (attempt %d of %d)", t.ID, t.Label, t.Status, t.Attempt, domain.MaxTaskAttempts)
	if d := describe(t); d != "" {
		s += ", " + d
	}
	switch {
	case t.Queued():
		s += " — queued behind the live-task cap; do not redo its work"
	case t.Status == domain.TaskInputRequired:
		s += " — waiting for a person's approval; do not redo its work"
	case t.Live():
		s += " — still working — do not redo its work"
	case t.Summary != "":
		s += " — " + t.Summary
	}
	return s + "\n"
}

// clip bounds a result for the model.
func clip(s string) string {
	if len(s) <= maxResultChars {
		return s
	}
	return s[:maxResultChars] + fmt.Sprintf("\n[… %d more characters …]", len(s)-maxResultChars)
}

// actVerb is task_retry or task_stop, on a task of the conversation.
func (m *Manager) actVerb(ctx context.Context, c VerbCall) (tools.Answer, error) {
	id, err := parseTaskArgs(c, true)
	if err != nil {
		return tools.Answer{}, err
	}
	if c.Name == tools.TaskStop.Name {
		t, err := m.stop(ctx, c.Run.OwnerID, id, c.Run.SessionID)
		if err != nil {
			return tools.Answer{}, err
		}
		return tools.Answer{Output: fmt.Sprintf("Stopped task %s (%q); it reports nothing back.", t.ID, t.Label), Display: card(t)}, nil
	}
	t, err := m.retry(ctx, c.Run.OwnerID, id, c.Run.SessionID)
	if err != nil {
		return tools.Answer{}, err
	}
	return tools.Answer{Output: fmt.Sprintf("Retrying task %s (%q): attempt %d of %d. Its result will come as a [task-notification].",
		t.ID, t.Label, t.Attempt, domain.MaxTaskAttempts), Display: card(t)}, nil
}
