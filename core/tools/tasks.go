package tools

import (
	"encoding/json"
	"slices"
)

// OriginTasks marks the four task verbs: the model's whole vocabulary for
// background work. A chat run gets them unless its agent turns
// behavior.subagents off; a task's own run never does (depth 1).
const OriginTasks = "tasks"

// SpawnTask starts background work: a sub-agent on a prompt, on its own
// conversation, reporting back when it ends.
var SpawnTask = Spec{
	Name: "spawn_task",
	Description: "Start a background task: an agent works on the prompt in its own conversation while you go on. " +
		"Use it for independent work worth doing in parallel or a long job you need not wait for. The task cannot see " +
		"this conversation, so the prompt must say everything it needs. Its result comes back to you as a " +
		"[task-notification] message when it ends; do not redo its work meanwhile.",
	Parameters: json.RawMessage(`{"type":"object","properties":{` +
		`"prompt":{"type":"string","description":"The whole brief: what to do, what to report back"},` +
		`"label":{"type":"string","description":"A few words naming the task, shown in the task list"},` +
		`"agent":{"type":"string","description":"The agent to run it: one you can hand off to, by name; omit for yourself"},` +
		`"workflow":{"type":"string","description":"A workflow to start instead, by name (the prompt is then its brief); omit agent with it"}},` +
		`"required":["prompt"],"additionalProperties":false}`),
	Origin: OriginTasks,
}

// TaskStatus reports on the conversation's tasks, waiting a while for a
// live one to change.
var TaskStatus = Spec{
	Name: "task_status",
	Description: "Report on background tasks. With task_id: that task's status and, once it ended, its result — " +
		"a task still working is waited on for up to 120 seconds. Without: every task of this conversation.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"task_id":{"type":"string"}},"additionalProperties":false}`),
	Origin:     OriginTasks,
}

// TaskRetry runs a failed task again, resuming from its progress.
var TaskRetry = Spec{
	Name:        "task_retry",
	Description: "Run a failed background task again; it resumes from the progress its earlier attempt made. A task has 3 attempts in all.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"task_id":{"type":"string"}},"required":["task_id"],"additionalProperties":false}`),
	Origin:      OriginTasks,
}

// TaskStop cancels a task that is still working; it reports nothing back.
var TaskStop = Spec{
	Name:        "task_stop",
	Description: "Stop a background task that is still working. A stopped task reports nothing back.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"task_id":{"type":"string"}},"required":["task_id"],"additionalProperties":false}`),
	Origin:      OriginTasks,
}

// Tasks are the task verbs, in the order they are offered.
var Tasks = []Spec{SpawnTask, TaskStatus, TaskRetry, TaskStop}

// IsTaskVerb reports whether name is one of the task verbs.
func IsTaskVerb(name string) bool {
	return slices.ContainsFunc(Tasks, func(s Spec) bool { return s.Name == name })
}
