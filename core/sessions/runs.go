package sessions

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// RunSummary is one run found by walking a session's entries: which
// question it answered and when, so a client can label a run whose
// exchange is not on screen.
type RunSummary struct {
	RunID     string
	Question  string
	OnPath    bool
	Entries   int
	StartedAt time.Time
	LastAt    time.Time
	// From the run's row; empty for a run recorded in another session (a
	// fork's copied history).
	Status        domain.RunStatus
	ErrorCode     string
	AgentConfigID string
	EndedAt       *time.Time
}

// Runs lists the runs that wrote the session's entries, oldest first, with
// how each stands from its row; a run of the session that wrote nothing (a
// regenerate that failed at once) is listed too. A run started with an empty
// input (a regenerate) answers the user message its first entry descends
// from. Returns not_found.
func (s *Journal) Runs(ctx context.Context, p domain.Principal, id string) ([]RunSummary, error) {
	out := []RunSummary{}
	err := s.store.ReadSession(ctx, id, func(r ports.SessionReader) error {
		sess, err := r.Session(ctx)
		if err != nil {
			return err
		}
		if err := sess.CheckContent(p); err != nil {
			return err
		}
		metas, err := r.EntryMetas(ctx, 0)
		if err != nil {
			return err
		}
		index := domain.IndexMetas(metas)
		path := domain.ActivePath(index, sess.TipID)
		at := map[string]int{}
		asked := map[string]string{} // run → the entry holding its question
		woken := map[string]bool{}   // runs whose question is a wake-up's task results
		first := map[string]domain.EntryMeta{}
		var notes []string // annotations: a workflow's start note labels its wake-up
		for _, m := range metas {
			if m.Kind == domain.KindAnnotation {
				notes = append(notes, m.ID)
			}
			if m.RunID == "" {
				continue
			}
			i, seen := at[m.RunID]
			if !seen {
				i = len(out)
				at[m.RunID] = i
				first[m.RunID] = m
				out = append(out, RunSummary{RunID: m.RunID, StartedAt: m.CreatedAt})
			}
			run := &out[i]
			run.Entries++
			run.LastAt = m.CreatedAt
			run.OnPath = run.OnPath || path[m.ID]
			if _, has := asked[m.RunID]; !has && m.Kind == domain.KindItem &&
				(m.Source == domain.SourceUser || m.Source == domain.SourceTaskNotification) {
				asked[m.RunID] = m.ID
				woken[m.RunID] = m.Source == domain.SourceTaskNotification
			}
		}
		var starts map[string]string // task id → "workflow (who started it)"
		for i := range out {
			if woken[out[i].RunID] && starts == nil {
				if starts, err = startNotes(ctx, r, notes); err != nil {
					return err
				}
			}
		}
		for i := range out {
			q, ok := asked[out[i].RunID]
			if !ok {
				q = nearestUserMessage(index, first[out[i].RunID].ParentID)
			}
			if q == "" {
				continue
			}
			e, err := r.FindEntry(ctx, q)
			if err != nil {
				return err
			}
			out[i].Question, _ = e.UserText()
			if woken[out[i].RunID] {
				out[i].Question = wakeLabel(e, starts)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.joinRuns(ctx, id, out)
}

// joinRuns adds each run row's status to the walk's summaries, and the rows
// the walk did not meet, keeping the list in start order.
func (s *Journal) joinRuns(ctx context.Context, sessionID string, out []RunSummary) ([]RunSummary, error) {
	rows, err := s.runs.ListSessionRuns(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	at := make(map[string]int, len(out))
	for i, r := range out {
		at[r.RunID] = i
	}
	for _, row := range rows {
		i, ok := at[row.ID]
		if !ok {
			i = len(out)
			out = append(out, RunSummary{RunID: row.ID, StartedAt: row.CreatedAt, LastAt: row.UpdatedAt})
		}
		r := &out[i]
		r.Status, r.ErrorCode, r.AgentConfigID, r.EndedAt = row.Status, row.ErrorCode, row.AgentConfigID, row.EndedAt
	}
	if len(out) > len(at) {
		sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt.Before(out[j].StartedAt) })
	}
	return out, nil
}

// startNotes reads the workflow_started notes among the annotations: the
// task each started, labelled "workflow (who started it)".
func startNotes(ctx context.Context, r ports.SessionReader, ids []string) (map[string]string, error) {
	out := map[string]string{}
	for _, id := range ids {
		e, err := r.FindEntry(ctx, id)
		if err != nil {
			return nil, err
		}
		if d := e.Display; d != nil && d.Kind == "workflow_started" && d.Extra["task_id"] != "" {
			out[d.Extra["task_id"]] = fmt.Sprintf("%s (%s)", d.Extra["workflow"], d.Extra["started_by"])
		}
	}
	return out, nil
}

// wakeLabel names a wake-up run by what woke it: "▶ build (cron @daily)"
// for a workflow a person or a trigger started (its start note), else the
// notification's own summary ("▶ "fix lint" completed").
func wakeLabel(e domain.Entry, starts map[string]string) string {
	var labels []string
	if e.Display != nil && e.Display.Extra["task_ids"] != "" {
		for _, id := range strings.Split(e.Display.Extra["task_ids"], ",") {
			if l, ok := starts[id]; ok {
				labels = append(labels, l)
			}
		}
	}
	switch {
	case len(labels) > 0:
		return "▶ " + strings.Join(labels, ", ")
	case e.Display != nil && e.Display.Summary != "":
		return "▶ " + e.Display.Summary
	}
	return "▶ background task results"
}

// nearestUserMessage walks up from id to the first user item.
func nearestUserMessage(index map[string]domain.EntryMeta, id string) string {
	seen := map[string]bool{}
	for id != "" && !seen[id] {
		seen[id] = true
		m, ok := index[id]
		if !ok {
			return ""
		}
		if m.Source == domain.SourceUser && m.Kind == domain.KindItem {
			return m.ID
		}
		id = m.ParentID
	}
	return ""
}
