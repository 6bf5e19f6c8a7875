package ports

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
)

// SkillReader reads skills.
type SkillReader interface {
	// FindSkill returns not_found when absent.
	FindSkill(ctx context.Context, id string) (domain.Skill, error)
	// ListSkills returns every skill, newest first.
	ListSkills(ctx context.Context) ([]domain.Skill, error)
}

// SkillWriter writes skills. Skills are unique per (repo label, name) among
// globals and among one owner's privates: inserts and updates return
// conflict when that is taken; updates and deletes return not_found for a
// missing row.
type SkillWriter interface {
	InsertSkill(ctx context.Context, s domain.Skill) error
	UpdateSkill(ctx context.Context, s domain.Skill) error
	DeleteSkill(ctx context.Context, id string) error
}

// SkillTx is one configuration write transaction as the skills service
// sees it: skills, and the agents whose selections name them.
type SkillTx interface {
	SkillReader
	SkillWriter
	AgentReader
}

// SkillStore keeps skills.
type SkillStore interface {
	SkillReader
	// InSkillTx runs fn in one configuration write transaction, committed
	// when fn returns nil and rolled back otherwise.
	InSkillTx(ctx context.Context, fn func(tx SkillTx) error) error
}
