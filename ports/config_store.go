package ports

import "context"

// ConfigReader reads configuration rows of every noun. The store answers
// from its read pool; a ConfigTx answers inside its transaction, so checks
// and writes see one state. A service that keeps one noun takes that
// noun's store (ProviderStore, AgentStore, SkillStore, WorkflowStore,
// MemoryStore, GuardrailStore) instead.
type ConfigReader interface {
	ProviderReader
	AgentReader
	GuardrailReader
	MemoryReader
	WorkflowReader
	SkillReader
}

// ConfigWriter writes configuration rows of every noun; each noun's writer
// says its uniqueness domain.
type ConfigWriter interface {
	ProviderWriter
	AgentWriter
	GuardrailWriter
	MemoryWriter
	WorkflowWriter
	SkillWriter
}

// ConfigTx is one write transaction over the whole configuration. No
// service needs all of it (each takes its noun's transaction); it is what
// a test seeding rows of every noun, and the configuration contract,
// write through.
type ConfigTx interface {
	ConfigReader
	ConfigWriter
}

// ConfigStore keeps the configuration. Every write goes through one
// transaction — InConfigTx, or the narrower one of a noun's store — so a
// rule that spans rows (a reference, a last use) is checked and acted on in
// one transaction.
type ConfigStore interface {
	ConfigReader
	ProviderStore
	AgentStore
	SkillStore
	WorkflowStore
	MemoryStore
	GuardrailStore
	// InConfigTx runs fn in one write transaction, committed when fn returns
	// nil and rolled back otherwise.
	InConfigTx(ctx context.Context, fn func(tx ConfigTx) error) error
}
