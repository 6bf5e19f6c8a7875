package agents

import (
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
)

func TestInstructionsLayerTheMemoriesThatReachTheAgentWithinTheBudget(t *testing.T) {
	a := domain.Agent{ID: "a1", AgentSpec: domain.AgentSpec{Instructions: "You are terse."}}
	mems := []domain.Memory{{Key: "tone", Content: "dry"}, {Key: "other", Content: "not mine", AgentID: "a2"},
		{Key: "mine", Content: "yes", AgentID: "a1"}, {Key: "huge", Content: strings.Repeat("x", domain.MemoryInjectionChars)},
		{Key: "late", Content: "past the budget"}}
	text, layers := Instructions("Be brief.", a, mems)
	memory := "Memories:\n- tone: dry\n- mine: yes\n"
	if want := "Be brief.\n\nYou are terse.\n\n" + memory; text != want {
		t.Fatalf("Instructions = %q, want %q", text, want)
	}
	if layers["global_prompt"] != 9 || layers["instructions"] != 14 || layers["memory"] != len(memory) {
		t.Fatalf("layers = %v", layers)
	}
	if text, _ := Instructions(" ", domain.Agent{AgentSpec: domain.AgentSpec{Instructions: "Only this."}}, nil); text != "Only this." {
		t.Fatalf("blank layers are not left out: %q", text)
	}
}
