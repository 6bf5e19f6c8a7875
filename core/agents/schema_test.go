package agents

import (
	"encoding/json"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

func TestOutputSchemaAndErrorHandlers(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`)
	check := func(spec domain.AgentSpec) map[string]string {
		var f errs.FieldErrors
		validateOutputs(&f, spec)
		return errs.FieldsOf(f.Err())
	}
	handler := func(v string) *domain.ErrorHandler { return &domain.ErrorHandler{FinalOutput: json.RawMessage(v)} }

	if got := check(domain.AgentSpec{ErrorHandlers: domain.ErrorHandlers{MaxTurns: handler(`"gave up"`)}}); got != nil {
		t.Fatalf("a string handler on a plain agent: %v", got)
	}
	if got := check(domain.AgentSpec{ErrorHandlers: domain.ErrorHandlers{MaxTurns: handler(`{"answer":"x"}`)}}); got["error_handlers.max_turns.final_output"] == "" {
		t.Fatalf("an object handler on a plain agent passed")
	}
	withSchema := domain.AgentSpec{Guardrails: domain.AgentGuardrails{OutputSchema: schema},
		ErrorHandlers: domain.ErrorHandlers{ModelRefusal: handler(`{"answer":"refused"}`), InvalidFinalOutput: handler(`{"nope":1}`)}}
	got := check(withSchema)
	if got["error_handlers.model_refusal.final_output"] != "" || got["error_handlers.invalid_final_output.final_output"] == "" {
		t.Fatalf("schema-checked handlers: %v", got)
	}
	for _, bad := range []string{`{"type":"nope"}`, `{"type":"string"}`, `{"$ref":"https://example.com/s.json"}`, `{"properties":{"a":{"minimum":"x"}}}`} {
		spec := domain.AgentSpec{Guardrails: domain.AgentGuardrails{OutputSchema: json.RawMessage(bad)}}
		if check(spec)["guardrails.output_schema"] == "" {
			t.Errorf("schema %s accepted", bad)
		}
	}
}
