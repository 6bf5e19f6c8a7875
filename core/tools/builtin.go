package tools

// Origins of the built-in tools every chat agent gets.
const OriginChecklist = "checklist"

// TodoWrite is the checklist the model keeps for itself on a chat run:
// people see it as a card. Whether a job is worth tracking is the model's
// judgement, like any other tool.
var TodoWrite = Spec{
	Name: "todo_write",
	Description: "Keep a short checklist of the steps of the current job. Send the whole list every time; " +
		"mark one item in_progress while you work on it and items completed as you finish them.",
	Parameters: parametersOf[TodoWriteArgs](),
	Origin:     OriginChecklist,
}

// TodoWriteArgs are todo_write's arguments: the whole checklist.
type TodoWriteArgs struct {
	Todos []Todo `json:"todos"`
}

// Todo is one item of the checklist.
type Todo struct {
	Content string     `json:"content"`
	Status  TodoStatus `json:"status"`
}

// TodoStatus is where a checklist item stands: one of the Todo… words.
type TodoStatus string

// The words a checklist item's status may be.
const (
	TodoPending    TodoStatus = "pending"
	TodoInProgress TodoStatus = "in_progress"
	TodoCompleted  TodoStatus = "completed"
)

// OriginPlan marks submit_plan, offered only while a session is planning.
const OriginPlan = "plan"

// SubmitPlan hands a planning session's finished plan to the person. It
// always waits for their decision, whatever the agent's approval settings:
// approving it ends the planning phase and the same run carries the plan
// out; rejecting it returns their reason and planning goes on.
var SubmitPlan = Spec{
	Name: "submit_plan",
	Description: "Present your finished plan to the person for approval. Call it once, when the plan is complete. " +
		"If they approve, planning mode ends and you carry the plan out straight away, with every tool available; " +
		"if they reject it, their reason comes back and you revise the plan.",
	Parameters: parametersOf[SubmitPlanArgs](),
	Origin:     OriginPlan,
}

// SubmitPlanArgs are submit_plan's arguments.
type SubmitPlanArgs struct {
	Plan string `json:"plan" jsonschema:"The plan, in Markdown: the steps, the files or systems each one touches, and how you will check the result"`
}
