package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/ports"
)

// NotificationPrefix starts the input of a wake-up run: background
// results for the model, kept out of the chat as a person's message.
const NotificationPrefix = "[task-notification] "

// drain pays a session's due debts with ONE wake-up run whose input
// carries every due result — unless the session is busy (its run's end
// drains again) or paused for a decision (a new run would supersede the
// pause; the resumed run's end drains). The debts are settled in the
// transaction that files the input, so a crash repeats both or neither.
func (m *Manager) drain(ctx context.Context, sessionID string) {
	m.drainMu.Lock()
	defer m.drainMu.Unlock()
	due, err := m.d.Store.DueWakeups(ctx, sessionID)
	if err != nil || len(due) == 0 {
		m.logErr("reading due wake-ups failed", err, "session_id", sessionID)
		return
	}
	if _, busy := m.d.Hub.Busy(sessionID); busy {
		return
	}
	if _, paused, err := m.d.Approvals.FindPausedRun(ctx, sessionID); err != nil || paused {
		m.logErr("reading a paused run failed", err, "session_id", sessionID)
		return
	}
	sess, err := m.d.Sessions.Find(ctx, sessionID)
	if err != nil {
		m.logErr("reading a session to wake failed", err, "session_id", sessionID)
		return
	}
	var ids []string
	var tasks []domain.Task
	for _, w := range due {
		ids = append(ids, w.ID)
		t, err := m.d.Store.FindTask(ctx, w.TaskID)
		if err != nil {
			m.logErr("reading a due task failed", err, "task_id", w.TaskID)
			return
		}
		// A task retried before its report was read runs again: its debt
		// is settled unreported (the new attempt reports when it ends; its
		// live state is not how the old one ended), and a task owed
		// twice is reported once, as it stands.
		if t.Status.Terminal() && !slices.ContainsFunc(tasks, func(o domain.Task) bool { return o.ID == t.ID }) {
			tasks = append(tasks, t)
		}
	}
	if len(tasks) == 0 {
		m.logErr("settling the debts of retried tasks failed", m.d.Store.SettleWakeups(ctx, ids, m.d.Clock.Now()), "session_id", sessionID)
		return
	}
	agentID := m.askingAgent(ctx, sess, tasks)
	if agentID == "" {
		// Nobody can read the results: the debt is dropped, visibly.
		note := domain.Entry{Kind: domain.KindAnnotation, Text: "Background task results could not be delivered: the agent that " +
			"started the tasks no longer exists.", Display: &domain.Display{Kind: "run_error", Title: "Task results not delivered", IsError: true}}
		_, err := m.d.Sessions.AppendWith(ctx, sessionID, []domain.Entry{note}, func(tx ports.SessionTx) error {
			return tx.SettleWakeups(ctx, ids, m.d.Clock.Now())
		})
		m.logErr("dropping undeliverable wake-ups failed", err, "session_id", sessionID)
		return
	}
	_, err = m.runs.StartBackground(ctx, runs.BackgroundStart{SessionID: sessionID, OwnerID: sess.OwnerID, AgentConfigID: agentID,
		Input: notification(tasks), Source: domain.SourceTaskNotification,
		Display: &domain.Display{Kind: domain.SourceTaskNotification, Title: "Background task results", Summary: reported(tasks),
			Extra: map[string]string{"task_ids": taskIDs(tasks)}},
		Triggered: slices.ContainsFunc(tasks, triggered), Continues: true,
		Also: func(tx ports.SessionTx) error { return tx.SettleWakeups(ctx, ids, m.d.Clock.Now()) }})
	switch {
	case err == nil:
		m.d.Log.Info("woke a session with task results", "session_id", sessionID, "tasks", len(tasks))
	case errs.Is(err, errs.Conflict), errs.Is(err, errs.Unavailable), errs.Is(err, errs.NotFound):
		// Someone else's run holds the session (its end drains), the server
		// is going down (the next start drains), or the session is gone.
	default:
		m.logErr("waking a session failed", err, "session_id", sessionID)
	}
}

// askingAgent is the agent a wake-up runs as: the one that spawned the
// first due task, if it still exists, else the session's.
func (m *Manager) askingAgent(ctx context.Context, sess domain.Session, tasks []domain.Task) string {
	for _, t := range tasks {
		var in inherit
		if json.Unmarshal(t.Inherit, &in) == nil && in.AskingAgentID != "" {
			if _, err := m.d.Config.FindAgent(ctx, in.AskingAgentID); err == nil {
				return in.AskingAgentID
			}
		}
	}
	if sess.AgentConfigID != "" {
		if _, err := m.d.Config.FindAgent(ctx, sess.AgentConfigID); err == nil {
			return sess.AgentConfigID
		}
	}
	return ""
}

// taskIDs lists the reported tasks' ids, comma-separated, for the
// notification's card: what labels the wake-up run (sessions.Runs).
func taskIDs(tasks []domain.Task) string {
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ID
	}
	return strings.Join(ids, ",")
}

// reported says in words how many results a wake-up carries.
func reported(tasks []domain.Task) string {
	if len(tasks) == 1 {
		return fmt.Sprintf("%q %s", tasks[0].Label, tasks[0].Status)
	}
	return fmt.Sprintf("%d tasks reported", len(tasks))
}

// notification is a wake-up's input: one parseable line per task (the
// label and result quoted, so no text of theirs can forge a line), the
// retry hint when one failed, and a closing line saying these are
// reports, not the person's request.
func notification(tasks []domain.Task) string {
	var b strings.Builder
	b.WriteString(NotificationPrefix + "Background tasks you started have ended.\n")
	failed := false
	for _, t := range tasks {
		fmt.Fprintf(&b, "task_id=%s status=%s attempt=%d label=%s result=%s\n", t.ID, t.Status, t.Attempt,
			strconv.Quote(t.Label), strconv.Quote(clip(t.Result)))
		failed = failed || t.Status == domain.TaskFailed
	}
	if failed {
		fmt.Fprintf(&b, "A failed task can run again with task_retry(task_id) (%d attempts in all); it resumes from its progress.\n",
			domain.MaxTaskAttempts)
	}
	b.WriteString("These are reports from background work, not a request from the person: use them for the work you were " +
		"doing, and tell the person what matters.")
	return b.String()
}
