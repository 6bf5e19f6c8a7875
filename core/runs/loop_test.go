package runs

import (
	"testing"

	"github.com/agents-server/agents-server/core/agents"
	"github.com/agents-server/agents-server/core/domain"
)

func TestToolChoiceResetsAfterToolsUnlessDisabled(t *testing.T) {
	s := &Service{}
	for _, c := range []struct {
		choice  string
		disable bool
		want    string
	}{{"required", false, "auto"}, {"required", true, "required"}, {"read_file", false, "auto"}, {"none", false, "none"}, {"", false, ""}} {
		rc := &runCtx{toolChoice: c.choice, agent: &agents.Built{Agent: domain.Agent{AgentSpec: domain.AgentSpec{
			Behavior: domain.AgentBehavior{DisableToolChoiceReset: c.disable}}}}}
		s.resetToolChoice(rc)
		if rc.toolChoice != c.want {
			t.Errorf("%q (disable %v) → %q, want %q", c.choice, c.disable, rc.toolChoice, c.want)
		}
	}
}
