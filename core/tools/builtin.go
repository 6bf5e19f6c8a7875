package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
)

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

// Builtins is the toolset of the tools every chat agent gets — the
// checklist and submit_plan (which the run engine answers itself: its
// approval changes the phase the run works in) — and of the selectable
// ones its tools list names.
type Builtins struct{}

// Offer gives every agent the checklist and submit_plan, and the
// selectable tools it names.
func (Builtins) Offer(_ context.Context, r Request) (Offer, error) {
	o := Offer{Selected: true, Specs: []Spec{TodoWrite, SubmitPlan}}
	for _, name := range r.Agent.Tools {
		if spec, ok := Lookup(name); ok {
			o.Specs = append(o.Specs, spec)
		}
	}
	return o, nil
}

// Call answers todo_write.
func (Builtins) Call(_ context.Context, _ RunCall, call domain.Item) Answer {
	if call.Name != TodoWrite.Name {
		return Failed("Error: %s is not answered here", call.Name)
	}
	return todoWrite(call)
}

// todoWrite keeps the model's checklist: the list travels in the call and
// its card, so a reload shows what streamed.
func todoWrite(call domain.Item) Answer {
	var args TodoWriteArgs
	dec := json.NewDecoder(strings.NewReader(call.Arguments))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil {
		return Failed("Error: todo_write takes {\"todos\": [{\"content\": …, \"status\": \"pending|in_progress|completed\"}]}: %s", err)
	}
	done := 0
	for _, t := range args.Todos {
		switch t.Status {
		case TodoCompleted:
			done++
		case TodoPending, TodoInProgress:
		default:
			return Failed("Error: status %q is not pending, in_progress or completed", t.Status)
		}
	}
	list, _ := json.Marshal(args.Todos)
	return Answer{Output: fmt.Sprintf("Checklist saved: %d of %d done.", done, len(args.Todos)),
		Display: &domain.Display{Kind: "todo", Title: "Checklist", Summary: fmt.Sprintf("%d/%d done", done, len(args.Todos)),
			Renderer: "todo", Extra: map[string]string{"todos": string(list)}}}
}
