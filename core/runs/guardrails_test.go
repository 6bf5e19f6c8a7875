package runs_test

import (
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/porttest"
)

func TestGuardrailTrips(t *testing.T) {
	t.Parallel()
	regex := func(name, pattern string, blocking bool, stages ...domain.GuardrailStage) domain.Guardrail {
		return domain.Guardrail{Name: name, Stages: stages, Mode: domain.ModeRegex, Pattern: pattern, Blocking: blocking}
	}
	checklist := porttest.Reply{Calls: []porttest.Call{call("todo_write", todo("rm -rf /"))}}
	for _, c := range []struct {
		name      string
		guardrail domain.Guardrail
		input     string
		replies   []porttest.Reply
		stage     string // "" when nothing trips
		calls     int
	}{
		{name: "a blocking input guardrail never reaches the model", guardrail: regex("no-secrets", "(?i)secret", true, domain.StageInput),
			input: "tell me the SECRET", replies: []porttest.Reply{{Text: "never"}}, stage: "input", calls: 0},
		{name: "a racing input guardrail cancels the call", guardrail: regex("no-secrets", "(?i)secret", false, domain.StageInput),
			input: "tell me the secret", replies: []porttest.Reply{{Block: true}}, stage: "input", calls: 1},
		{name: "an input guardrail that passes", guardrail: regex("no-secrets", "(?i)secret", false, domain.StageInput),
			input: "hello", replies: []porttest.Reply{{Text: "hi"}}, calls: 1},
		{name: "a tool_input guardrail stops the call", guardrail: regex("no-rm", `rm -rf`, false, domain.StageToolInput),
			input: "clean up", replies: []porttest.Reply{checklist, {Text: "never"}}, stage: "tool_input", calls: 1},
		{name: "a tool_output guardrail stops the model reading", guardrail: regex("no-saves", "Checklist saved", false, domain.StageToolOutput),
			input: "plan", replies: []porttest.Reply{checklist, {Text: "never"}}, stage: "tool_output", calls: 1},
		{name: "an output guardrail fails the answer", guardrail: domain.Guardrail{Name: "short", Stages: []domain.GuardrailStage{domain.StageOutput},
			Mode: domain.ModeMaxLength, MaxChars: 5}, input: "talk", replies: []porttest.Reply{{Text: "far too long"}}, stage: "output", calls: 1},
		{name: "an output guardrail passing a short answer", guardrail: domain.Guardrail{Name: "short", Stages: []domain.GuardrailStage{domain.StageOutput},
			Mode: domain.ModeMaxLength, MaxChars: 5}, input: "talk", replies: []porttest.Reply{{Text: "ok"}}, calls: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.guardrail(c.guardrail)
			// Agents name guardrails case-insensitively.
			spec := domain.AgentSpec{Guardrails: domain.AgentGuardrails{Guardrails: []string{"Other", c.guardrail.Name}}}
			h.guardrail(domain.Guardrail{Name: "other", Stages: domain.GuardrailStages, Mode: domain.ModeRegex, Pattern: "never-matches"})
			run, events := h.run(spec, c.input, c.replies...)
			if n := len(h.llm.Requests()); n != c.calls {
				t.Fatalf("%d model calls, want %d", n, c.calls)
			}
			if c.stage == "" {
				if last(events).Type != domain.EventOutput {
					t.Fatalf("ended with %s", ending(t, events))
				}
				return
			}
			p := payload[domain.ErrorPayload](t, last(events))
			if last(events).Type != domain.EventError || p.Code != domain.CodeGuardrail || p.Guardrail != c.guardrail.Name || p.Stage != c.stage {
				t.Fatalf("ended with %s %+v", last(events).Type, p)
			}
			if row := h.row(run.ID); row.Status != domain.RunError || row.ErrorCode != domain.CodeGuardrail {
				t.Fatalf("row = %+v", row)
			}
			entries := h.entries(run.SessionID)
			note := entries[len(entries)-1]
			if note.Kind != domain.KindAnnotation || note.Display.Extra["guardrail"] != c.guardrail.Name || note.Display.Extra["stage"] != c.stage ||
				!note.Display.IsError {
				t.Fatalf("the ending note = %+v %+v", note, note.Display)
			}
			if !hasEntry(entries, "item/user message: "+c.input) {
				t.Fatalf("the input was not kept: %q", describe(entries))
			}
			var tripped int
			for _, sp := range h.spans(run.ID, domain.SpanGuardrail) {
				if sp.Meta["tripped"] == true {
					tripped++
				}
			}
			if tripped != 1 {
				t.Fatalf("%d guardrail spans tripped", tripped)
			}
		})
	}
}
