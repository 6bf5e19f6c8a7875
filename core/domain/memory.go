package domain

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agents-server/agents-server/core/errs"
)

// Memory limits: what one memory may hold and how many a scope keeps.
const (
	MaxMemoryKeyLen      = 200       // characters
	MaxMemoryContent     = 1_000_000 // bytes
	MaxMemoriesPerScope  = 100
	MemoryInjectionChars = 20_000 // what the runner puts in front of the model
)

// Memory is a named note the runner places in an agent's instructions: a
// global one reaches every agent, an agent's own only that agent.
type Memory struct {
	ID        string
	AgentID   string // "" = global
	Key       string
	Content   string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Validate checks the key and content bounds. Returns validation.
func (m Memory) Validate() error {
	var f errs.FieldErrors
	switch {
	case strings.TrimSpace(m.Key) == "":
		f.Add("key", "is required")
	case utf8.RuneCountInString(m.Key) > MaxMemoryKeyLen:
		f.Add("key", "must be at most %d characters", MaxMemoryKeyLen)
	case strings.ContainsAny(m.Key, "\r\n"):
		f.Add("key", "must be one line")
	}
	if len(m.Content) > MaxMemoryContent {
		f.Add("content", "must be at most %d bytes", MaxMemoryContent)
	}
	return f.Err()
}
