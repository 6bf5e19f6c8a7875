package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// labelRunes bounds a label made from the prompt.
const labelRunes = 60

// selfNames name the calling agent itself, unless an agent it can hand off
// to is called that.
var selfNames = []string{"", "self", "default", "current"}

// inherit is the spawning run's configuration the task keeps: who asked
// (the agent a wake-up runs as) and where.
type inherit struct {
	AskingAgentID string `json:"asking_agent_id"`
	ProjectID     string `json:"project_id,omitempty"`
	// Triggered: trigger-started work, whose runs (attempts, steps, the
	// wake-ups reading them) keep their exec grants to themselves.
	Triggered bool `json:"triggered,omitempty"`
}

// triggered reports whether t is trigger-started work.
func triggered(t domain.Task) bool {
	var in inherit
	return json.Unmarshal(t.Inherit, &in) == nil && in.Triggered
}

type spawnArgs struct {
	Prompt   string `json:"prompt"`
	Label    string `json:"label"`
	Agent    string `json:"agent"`
	Workflow string `json:"workflow"`
}

// spawn starts a task from a chat run's spawn_task call: a hidden session
// for it, its row, and its first attempt (queued behind the cap if the
// conversation is at it; refused, conflict, when its queue is full).
func (m *Manager) spawn(ctx context.Context, c VerbCall) (domain.Task, error) {
	var args spawnArgs
	dec := json.NewDecoder(strings.NewReader(c.Arguments))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil {
		return domain.Task{}, errs.E(errs.Validation, "spawn_task takes {\"prompt\": …, \"label\"?: …, \"agent\"?: …, \"workflow\"?: …}: %v", err)
	}
	if strings.TrimSpace(args.Prompt) == "" {
		return domain.Task{}, errs.E(errs.Validation, "spawn_task needs a prompt: the task sees nothing of this conversation")
	}
	parent, err := m.d.Sessions.Find(ctx, c.Run.SessionID)
	if err != nil {
		return domain.Task{}, err
	}
	if parent.IsTaskSession() {
		return domain.Task{}, errs.E(errs.Validation, "a background task cannot start tasks of its own")
	}
	if strings.TrimSpace(args.Workflow) != "" {
		return m.spawnWorkflow(ctx, c, parent, args)
	}
	target, err := m.target(ctx, c.Agent, args.Agent)
	if err != nil {
		return domain.Task{}, err
	}
	label := strings.Join(strings.Fields(args.Label), " ")
	if label == "" {
		label = strings.Join(strings.Fields(args.Prompt), " ")
	}
	label = clipLabel(label)
	admit, err := m.room(ctx)
	if err != nil {
		return domain.Task{}, err
	}
	if err := m.checkRoomFirst(ctx, parent.ID, admit); err != nil {
		return domain.Task{}, err
	}
	child, err := m.d.Sessions.CreateChild(ctx, parent, label, target.ID)
	if err != nil {
		return domain.Task{}, err
	}
	snapshot, _ := json.Marshal(inherit{AskingAgentID: c.Agent.ID, ProjectID: parent.ProjectID, Triggered: c.Triggered})
	now := m.d.Clock.Now()
	t := domain.Task{ID: m.d.IDs.NewID(), RunID: m.d.IDs.NewID(), OwnerID: parent.OwnerID, ParentSessionID: parent.ID,
		ParentRunID: c.Run.ID, ToolCallID: c.CallID, ChildSessionID: child.ID, AgentConfigID: target.ID, Label: label,
		Prompt: args.Prompt, Kind: domain.TaskAgent, Attempt: 1, Status: domain.TaskWorking, Inherit: snapshot,
		CreatedAt: now, UpdatedAt: now}
	if err := m.d.Store.CreateTask(ctx, t, admit); err != nil {
		return t, err
	}
	m.changed(t)
	m.pump(ctx, parent.ID)
	return m.d.Store.FindTask(ctx, t.ID)
}

// target resolves spawn_task's agent: one the caller can hand off to, by
// name, or the caller itself.
func (m *Manager) target(ctx context.Context, caller domain.Agent, name string) (domain.Agent, error) {
	name = strings.TrimSpace(name)
	var offered []string
	for _, id := range caller.Handoffs {
		a, err := m.d.Config.FindAgent(ctx, id)
		if errs.Is(err, errs.NotFound) || (err == nil && !caller.MayReference(a.Ownership)) {
			continue
		}
		if err != nil {
			return domain.Agent{}, err
		}
		if name != "" && strings.EqualFold(a.Name, name) {
			return a, nil
		}
		offered = append(offered, a.Name)
	}
	for _, self := range append(selfNames, caller.Name) {
		if strings.EqualFold(name, self) {
			return caller, nil
		}
	}
	return domain.Agent{}, errs.E(errs.Validation, "there is no agent %q to run the task: name one of %s, or omit agent to run it yourself",
		name, strings.Join(append(offered, fmt.Sprintf("%q (yourself)", caller.Name)), ", "))
}

// clipLabel bounds a label to labelRunes.
func clipLabel(label string) string {
	if r := []rune(label); len(r) > labelRunes {
		return string(r[:labelRunes-1]) + "…"
	}
	return label
}
