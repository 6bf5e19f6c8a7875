package tools

import "slices"

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
	Parameters: parametersOf[SpawnTaskArgs](),
	Origin:     OriginTasks,
}

// SpawnTaskArgs are spawn_task's arguments.
type SpawnTaskArgs struct {
	Prompt   string `json:"prompt" jsonschema:"The whole brief: what to do, what to report back"`
	Label    string `json:"label,omitempty" jsonschema:"A few words naming the task, shown in the task list"`
	Agent    string `json:"agent,omitempty" jsonschema:"The agent to run it: one you can hand off to, by name; omit for yourself"`
	Workflow string `json:"workflow,omitempty" jsonschema:"A workflow to start instead, by name (the prompt is then its brief); omit agent with it"`
}

// TaskStatus reports on the conversation's tasks, waiting a while for a
// live one to change.
var TaskStatus = Spec{
	Name: "task_status",
	Description: "Report on background tasks. With task_id: that task's status and, once it ended, its result — " +
		"a task still working is waited on for up to 120 seconds. Without: every task of this conversation.",
	Parameters: parametersOf[TaskStatusArgs](),
	Origin:     OriginTasks,
	ReadOnly:   true,
}

// TaskStatusArgs are task_status's arguments: no task_id lists them all.
type TaskStatusArgs struct {
	TaskID string `json:"task_id,omitempty"`
}

// TaskIDArgs are the arguments of the verbs that act on one task.
type TaskIDArgs struct {
	TaskID string `json:"task_id"`
}

// TaskRetry runs a failed task again, resuming from its progress.
var TaskRetry = Spec{
	Name:        "task_retry",
	Description: "Run a failed background task again; it resumes from the progress its earlier attempt made. A task has 3 attempts in all.",
	Parameters:  parametersOf[TaskIDArgs](),
	Origin:      OriginTasks,
}

// TaskStop cancels a task that is still working; it reports nothing back.
var TaskStop = Spec{
	Name:        "task_stop",
	Description: "Stop a background task that is still working. A stopped task reports nothing back.",
	Parameters:  parametersOf[TaskIDArgs](),
	Origin:      OriginTasks,
}

// Tasks are the task verbs, in the order they are offered.
var Tasks = []Spec{SpawnTask, TaskStatus, TaskRetry, TaskStop}

// IsTaskVerb reports whether name is one of the task verbs.
func IsTaskVerb(name string) bool {
	return slices.ContainsFunc(Tasks, func(s Spec) bool { return s.Name == name })
}
