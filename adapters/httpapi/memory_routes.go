package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
)

// MemoryInput is what a client writes about a memory.
type MemoryInput struct {
	Key           string `json:"key" required:"true" doc:"Unique within its scope"`
	Content       string `json:"content" doc:"At most 1,000,000 bytes"`
	AgentConfigID string `json:"agent_config_id,omitempty" doc:"The agent this memory belongs to; empty = global (admins only). Fixed once created"`
}

func (in MemoryInput) core() domain.Memory {
	return domain.Memory{Key: in.Key, Content: in.Content, AgentID: in.AgentConfigID}
}

// MemoryView is a memory as read.
type MemoryView struct {
	ID            string    `json:"id"`
	Key           string    `json:"key"`
	Content       string    `json:"content"`
	AgentConfigID string    `json:"agent_config_id,omitempty" doc:"Absent for a global memory"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

func memoryView(m domain.Memory) MemoryView {
	return MemoryView{ID: m.ID, Key: m.Key, Content: m.Content, AgentConfigID: m.AgentID, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
}

func (s *Server) memoryRoutes() []Route {
	p := APIPrefix + "/memories"
	return []Route{
		op(http.MethodGet, p, "listMemories", "memories",
			"Global memories and those of agents the caller can see", http.StatusOK, s.handleListMemories).
			WithQuery(QueryParam{Name: "agent_config_id", Type: "string", Description: "Only this agent's memories"}).
			WithRefusals(http.StatusNotFound),
		op(http.MethodPost, p, "createMemory", "memories",
			"Add a memory: global (admin only) or one agent's (whoever may edit the agent)", http.StatusCreated, s.handleCreateMemory).
			WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodGet, p+"/:id", "getMemory", "memories", "One memory", http.StatusOK, s.handleGetMemory),
		op(http.MethodPut, p+"/:id", "updateMemory", "memories", "Replace a memory's key and content", http.StatusOK, s.handleUpdateMemory).
			WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodDelete, p+"/:id", "deleteMemory", "memories", "Delete a memory", http.StatusNoContent, s.handleDeleteMemory).
			WithRefusals(http.StatusForbidden),
	}
}

func (s *Server) handleListMemories(c echo.Context, _ *NoBody) ([]MemoryView, error) {
	list, err := s.deps.Memories.List(c.Request().Context(), caller(c), c.QueryParam("agent_config_id"))
	return mapAll(list, memoryView), err
}

func (s *Server) handleCreateMemory(c echo.Context, req *MemoryInput) (MemoryView, error) {
	m, err := s.deps.Memories.Create(c.Request().Context(), caller(c), req.core())
	return memoryView(m), err
}

func (s *Server) handleGetMemory(c echo.Context, _ *NoBody) (MemoryView, error) {
	m, err := s.deps.Memories.Get(c.Request().Context(), caller(c), c.Param("id"))
	return memoryView(m), err
}

func (s *Server) handleUpdateMemory(c echo.Context, req *MemoryInput) (MemoryView, error) {
	m, err := s.deps.Memories.Update(c.Request().Context(), caller(c), c.Param("id"), req.core())
	return memoryView(m), err
}

func (s *Server) handleDeleteMemory(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.Memories.Delete(c.Request().Context(), caller(c), c.Param("id"))
}
