package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/tools"
)

// Skills lists the skills an agent reads: those it may reference, narrowed
// by its selection.
type Skills interface {
	ForAgent(ctx context.Context, a domain.Agent) ([]domain.Skill, error)
}

// equipSkills puts the skills index after everything else in the
// instructions (after the sandbox prompt) and offers read_skill, when the
// agent has skills to read.
func (s *Service) equipSkills(ctx context.Context, b *builtAgent) error {
	if s.d.Skills == nil {
		return nil
	}
	list, err := s.d.Skills.ForAgent(ctx, b.agent)
	if err != nil || len(list) == 0 {
		return err
	}
	b.skills = map[string]domain.Skill{}
	var index strings.Builder
	index.WriteString("Skills: documents of know-how you can read with read_skill(name). When a task matches a skill's " +
		"description, read the skill first and follow it.\n")
	for _, k := range list {
		b.skills[k.ModelName()] = k
		fmt.Fprintf(&index, "- %s: %s\n", k.ModelName(), strings.Join(strings.Fields(k.Description), " "))
	}
	if b.instructions != "" {
		b.instructions += "\n\n"
	}
	b.instructions += index.String()
	b.layers["skills_index"] = index.Len()
	b.specs = append(b.specs, tools.ReadSkill)
	return nil
}

// readSkill answers read_skill with the document of a skill the agent has.
func readSkill(rc *runCtx, call domain.Item) toolResult {
	r := toolResult{callID: call.CallID, name: call.Name}
	var args struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil {
		r.isError, r.output = true, "Error: read_skill takes {\"name\": …}: "+err.Error()
		return r
	}
	k, ok := rc.agent.skills[strings.TrimSpace(args.Name)]
	if !ok {
		var names []string
		for n := range rc.agent.skills {
			names = append(names, n)
		}
		r.isError = true
		r.output = fmt.Sprintf("Error: there is no skill named %q. The skills you have: %s.", args.Name, strings.Join(names, ", "))
		return r
	}
	r.output = k.Content
	r.display = &domain.Display{Kind: "skill", Title: k.ModelName(), Summary: k.Description,
		Extra: map[string]string{"skill_id": k.ID}}
	return r
}
