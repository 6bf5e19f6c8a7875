package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/tools"
)

// Toolset is read_skill as a run's toolset: an agent with skills to read
// gets it, and the skills index after everything else in its instructions
// (after the sandbox prompt).
func (s *Service) Toolset() tools.Toolset { return toolset{s} }

type toolset struct{ s *Service }

// Offer lists the agent's skills in an index and offers read_skill, when
// it has skills to read.
func (ts toolset) Offer(ctx context.Context, r tools.Request) (tools.Offer, error) {
	list, err := ts.s.ForAgent(ctx, r.Agent)
	if err != nil || len(list) == 0 {
		return tools.Offer{}, err
	}
	byName := map[string]domain.Skill{}
	var index strings.Builder
	index.WriteString("Skills: documents of know-how you can read with read_skill(name). When a task matches a skill's " +
		"description, read the skill first and follow it.\n")
	for _, k := range list {
		byName[k.ModelName()] = k
		fmt.Fprintf(&index, "- %s: %s\n", k.ModelName(), strings.Join(strings.Fields(k.Description), " "))
	}
	return tools.Offer{Specs: []tools.Spec{tools.ReadSkill}, Instructions: index.String(), Layer: "skills_index", State: byName}, nil
}

// Call answers read_skill with the document of a skill the agent has.
func (toolset) Call(_ context.Context, rc tools.RunCall, call domain.Item) tools.Answer {
	skills, _ := rc.State.(map[string]domain.Skill)
	var args tools.ReadSkillArgs
	if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil {
		return tools.Failed("Error: read_skill takes {\"name\": …}: %s", err)
	}
	k, ok := skills[strings.TrimSpace(args.Name)]
	if !ok {
		var names []string
		for n := range skills {
			names = append(names, n)
		}
		return tools.Failed("Error: there is no skill named %q. The skills you have: %s.", args.Name, strings.Join(names, ", "))
	}
	return tools.Answer{Output: k.Content, Display: &domain.Display{Kind: "skill", Title: k.ModelName(), Summary: k.Description,
		Extra: map[string]string{"skill_id": k.ID}}}
}
