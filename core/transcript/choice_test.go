package transcript

import (
	"testing"

	"github.com/agents-server/agents-server/core/domain"
)

func TestChoiceNoteSaysWhatChanged(t *testing.T) {
	a := domain.Agent{ID: "a2"}
	a.Name, a.Model = "Coder", "own"
	talked := domain.Session{AgentConfigID: "a1", LastSeq: 4}
	for _, c := range []struct {
		name  string
		sess  domain.Session
		agent string
		model string
		title string
		text  string
	}{
		{"another agent", talked, "a2", "", "Agent changed", "Switched to Coder (own)."},
		{"another agent on a chosen model", talked, "a2", "big", "Agent changed", "Switched to Coder. This answer uses big in place of its own own."},
		{"a chosen model", domain.Session{AgentConfigID: "a2", LastSeq: 4}, "a2", "big", "Model for this answer", "This answer uses big in place of Coder's own own."},
		{"a first answer switches nothing", domain.Session{AgentConfigID: "a1"}, "a2", "", "", ""},
		{"the agent's own model is no choice", domain.Session{AgentConfigID: "a2", LastSeq: 4}, "a2", "own", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ChoiceNote("r1", c.sess, a, c.model)
			if c.text == "" {
				if len(got) != 0 {
					t.Fatalf("noted %+v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Kind != domain.KindAnnotation || got[0].RunID != "r1" || got[0].Text != c.text ||
				got[0].Display.Title != c.title || got[0].Display.Extra["agent_config_id"] != "a2" {
				t.Fatalf("note = %+v (display %+v)", got, got[0].Display)
			}
		})
	}
}
