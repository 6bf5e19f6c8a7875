package agents

import (
	"strings"

	"github.com/agents-server/agents-server/core/domain"
)

// Instructions layers what an agent is told before its conversation: the
// global system prompt, the agent's instructions and the memories that
// reach it (the global ones and its own, in mems' order, within
// domain.MemoryInjectionChars). It reports each layer's size in
// characters, for the context profile; skills_index is filled in later.
func Instructions(global string, a domain.Agent, mems []domain.Memory) (string, map[string]int) {
	var block strings.Builder
	for _, m := range mems {
		if m.AgentID != "" && m.AgentID != a.ID {
			continue
		}
		line := "- " + m.Key + ": " + m.Content + "\n"
		if block.Len()+len(line) > domain.MemoryInjectionChars {
			break
		}
		block.WriteString(line)
	}
	memory := ""
	if block.Len() > 0 {
		memory = "Memories:\n" + block.String()
	}
	var parts []string
	for _, p := range []string{global, a.Instructions, memory} {
		if strings.TrimSpace(p) != "" {
			parts = append(parts, p)
		}
	}
	layers := map[string]int{"global_prompt": len(global), "instructions": len(a.Instructions), "memory": len(memory), "skills_index": 0}
	return strings.Join(parts, "\n\n"), layers
}
