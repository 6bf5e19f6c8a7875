package tools

import "encoding/json"

// Origins of the built-in tools every chat agent gets.
const OriginChecklist = "checklist"

// TodoWrite is the checklist the model keeps for itself on a chat run:
// people see it as a card. Whether a job is worth tracking is the model's
// judgement, like any other tool.
var TodoWrite = Spec{
	Name: "todo_write",
	Description: "Keep a short checklist of the steps of the current job. Send the whole list every time; " +
		"mark one item in_progress while you work on it and items completed as you finish them.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"todos":{"type":"array","items":{"type":"object",` +
		`"properties":{"content":{"type":"string"},"status":{"type":"string","enum":["pending","in_progress","completed"]}},` +
		`"required":["content","status"],"additionalProperties":false}}},"required":["todos"],"additionalProperties":false}`),
	Origin: OriginChecklist,
}
