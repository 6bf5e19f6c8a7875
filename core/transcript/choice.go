package transcript

import (
	"cmp"
	"fmt"

	"github.com/agents-server/agents-server/core/domain"
)

// displayAgentChoice marks the note that records a person's change of agent
// or model between answers.
const displayAgentChoice = "agent_choice"

// ChoiceNote records, for people, a change made from the conversation
// itself: the run answers with another agent than the conversation's last
// (switching it for what follows), or with a model chosen for this answer
// only in place of the agent's own. sess is the conversation before the
// run; its first answer switches nothing. It returns no entry when nothing
// changed.
func ChoiceNote(runID string, sess domain.Session, a domain.Agent, model string) []domain.Entry {
	switched := sess.LastSeq > 0 && sess.AgentConfigID != "" && sess.AgentConfigID != a.ID
	chosen := model != "" && model != a.Model
	var text string
	switch {
	case switched && chosen:
		text = fmt.Sprintf("Switched to %s. This answer uses %s in place of its own %s.", a.Name, model, a.Model)
	case switched:
		text = fmt.Sprintf("Switched to %s (%s).", a.Name, a.Model)
	case chosen:
		text = fmt.Sprintf("This answer uses %s in place of %s's own %s.", model, a.Name, a.Model)
	default:
		return nil
	}
	title := "Model for this answer"
	if switched {
		title = "Agent changed"
	}
	return []domain.Entry{{Kind: domain.KindAnnotation, RunID: runID, Text: text,
		Display: &domain.Display{Kind: displayAgentChoice, Title: title,
			Extra: map[string]string{"agent_config_id": a.ID, "model": cmp.Or(model, a.Model)}}}}
}
