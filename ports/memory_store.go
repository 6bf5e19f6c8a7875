package ports

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
)

// MemoryReader reads memories.
type MemoryReader interface {
	// FindMemory returns not_found when absent.
	FindMemory(ctx context.Context, id string) (domain.Memory, error)
	// ListMemories returns every memory, global ones first, then by key.
	ListMemories(ctx context.Context) ([]domain.Memory, error)
	// CountMemories counts the memories of a scope ("" = global).
	CountMemories(ctx context.Context, agentID string) (int, error)
}

// MemoryView is what the memories service reads: the memories, and the
// agents whose permissions an agent's memories carry.
type MemoryView interface {
	MemoryReader
	AgentReader
}

// MemoryWriter writes memories. Inserts and updates return conflict when
// the key is taken in its scope; updates and deletes return not_found for a
// missing row.
type MemoryWriter interface {
	InsertMemory(ctx context.Context, m domain.Memory) error
	UpdateMemory(ctx context.Context, m domain.Memory) error
	DeleteMemory(ctx context.Context, id string) error
}

// MemoryTx is one configuration write transaction as the memories service
// sees it.
type MemoryTx interface {
	MemoryView
	MemoryWriter
}

// MemoryStore keeps memories.
type MemoryStore interface {
	MemoryView
	// InMemoryTx runs fn in one configuration write transaction, committed
	// when fn returns nil and rolled back otherwise.
	InMemoryTx(ctx context.Context, fn func(tx MemoryTx) error) error
}
