package domain

import (
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/errs"
)

func TestGuardrailEvaluate(t *testing.T) {
	re, err := CompileGuardrail(Guardrail{Name: "secrets", Stages: []GuardrailStage{StageInput, StageToolOutput}, Mode: ModeRegex, Pattern: `(?i)sk-[a-z0-9]{8,}`})
	if err != nil {
		t.Fatal(err)
	}
	if v := re.Evaluate(StageInput, "my key is SK-abcdef123456"); !v.Tripped || !strings.Contains(v.Reason, "SK-abcdef123456") {
		t.Fatalf("input: %+v", v)
	}
	if v := re.Evaluate(StageToolOutput, "sk-abcdefgh99"); !v.Tripped {
		t.Fatal("tool_output did not trip")
	}
	if v := re.Evaluate(StageOutput, "sk-abcdefgh99"); v.Tripped {
		t.Fatal("a stage the guardrail does not cover tripped")
	}
	if v := re.Evaluate(StageInput, "no key here"); v.Tripped {
		t.Fatal("clean text tripped")
	}

	ml, err := CompileGuardrail(Guardrail{Name: "short", Stages: []GuardrailStage{StageOutput}, Mode: ModeMaxLength, MaxChars: 5})
	if err != nil {
		t.Fatal(err)
	}
	if ml.Evaluate(StageOutput, "héllo").Tripped || !ml.Evaluate(StageOutput, "héllo!").Tripped {
		t.Fatal("max_length counts characters, not bytes")
	}
}

func TestGuardrailValidation(t *testing.T) {
	cases := map[string]Guardrail{
		"name":      {Stages: []GuardrailStage{StageInput}, Mode: ModeRegex, Pattern: "x"},
		"stages":    {Name: "g", Mode: ModeRegex, Pattern: "x"},
		"stages[0]": {Name: "g", Stages: []GuardrailStage{"before"}, Mode: ModeRegex, Pattern: "x"},
		"stages[1]": {Name: "g", Stages: []GuardrailStage{StageInput, StageInput}, Mode: ModeRegex, Pattern: "x"},
		"pattern":   {Name: "g", Stages: []GuardrailStage{StageInput}, Mode: ModeRegex, Pattern: "(unclosed"},
		"max_chars": {Name: "g", Stages: []GuardrailStage{StageInput}, Mode: ModeMaxLength},
		"mode":      {Name: "g", Stages: []GuardrailStage{StageInput}, Mode: "semantic"},
	}
	for field, g := range cases {
		_, err := CompileGuardrail(g)
		if errs.FieldsOf(err)[field] == "" {
			t.Errorf("%s: %v", field, err)
		}
	}
}

func TestAgentSpecValidation(t *testing.T) {
	good := AgentSpec{Name: "coder", Model: "gpt-5.2", Avatar: "/avatars/owl.svg", Approval: AgentApproval{ApproveTools: []string{"*"}}}
	if err := good.Validate(); err != nil {
		t.Fatalf("good spec: %v", err)
	}
	temp := 3.0
	bad := AgentSpec{
		Name: " padded", Avatar: "https://evil.example/a.svg",
		Behavior:   AgentBehavior{MaxTurns: -1, ToolNotFoundBehavior: "panic", StopAtTools: "ok,bad name"},
		Resilience: AgentResilience{FallbackModels: []FallbackModel{{}}, RetryPolicy: RetryPolicy{InitialBackoffMS: 500, MaxBackoffMS: 100}},
		Approval:   AgentApproval{ApproveTools: []string{"*", "exec_command"}},
		Compaction: AgentCompaction{Mode: "squash"}, ModelSettings: ModelSettings{Temperature: &temp},
		Tools: []string{"a", "a"}, Session: AgentSession{PromptVersion: "3"},
		ErrorHandlers: ErrorHandlers{MaxTurns: &ErrorHandler{}},
		Guardrails:    AgentGuardrails{OutputSchema: []byte(`[1]`)},
	}
	fields := errs.FieldsOf(bad.Validate())
	for _, f := range []string{"name", "avatar", "model", "behavior.max_turns", "behavior.tool_not_found_behavior",
		"behavior.stop_at_tools", "resilience.fallback_models[0].provider_id", "resilience.fallback_models[0].model",
		"resilience.retry_policy.max_backoff_ms", "approval.approve_tools", "compaction.compaction_mode",
		"model_settings.temperature", "tools[1]", "session.prompt_version", "error_handlers.max_turns.final_output",
		"guardrails.output_schema"} {
		if fields[f] == "" {
			t.Errorf("no error on %s (got %v)", f, fields)
		}
	}
}

func TestHandoffToolName(t *testing.T) {
	for in, want := range map[string]string{
		"Code Reviewer": "transfer_to_code_reviewer", "code-reviewer": "transfer_to_code_reviewer",
		"  Q&A -- bot!": "transfer_to_q_a_bot", "planner2": "transfer_to_planner2",
	} {
		if got := HandoffToolName(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}
