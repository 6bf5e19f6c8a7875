package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports"
)

// CreateAgentRequest adds an agent; scope global is admin-only.
type CreateAgentRequest struct {
	domain.AgentSpec
	Scope string `json:"scope,omitempty" enum:"scope" doc:"Default private"`
}

// AgentView is an agent as read.
type AgentView struct {
	ID      string `json:"id"`
	Scope   string `json:"scope" enum:"scope"`
	OwnerID string `json:"owner_id"`
	domain.AgentSpec
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func agentView(a domain.Agent) AgentView {
	return AgentView{ID: a.ID, Scope: string(a.Scope), OwnerID: a.OwnerID, AgentSpec: a.AgentSpec, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
}

// ToolView is one tool of an agent's surface, as the model would see it.
type ToolView struct {
	Name        string                `json:"name"`
	Description string                `json:"description"`
	Parameters  json.RawMessage       `json:"parameters" doc:"JSON Schema of the arguments"`
	Origin      string                `json:"origin" doc:"Where the tool comes from: builtin, handoff, mcp, …"`
	Server      string                `json:"server,omitempty" doc:"For an MCP tool: the server it comes from"`
	Annotations *ports.MCPAnnotations `json:"annotations,omitempty" doc:"For an MCP tool: the server's hints, shown but never trusted for approval or planning"`
}

func toolView(t tools.Spec) ToolView {
	return ToolView{Name: t.Name, Description: t.Description, Parameters: t.Parameters, Origin: t.Origin, Server: t.Server, Annotations: t.Hints}
}

func (s *Server) agentRoutes() []Route {
	p := APIPrefix + "/agents"
	return []Route{
		op(http.MethodGet, p, "listAgents", "agents",
			"Agents the caller can see: shared ones first, then the caller's own", http.StatusOK, s.handleListAgents),
		op(http.MethodPost, p, "createAgent", "agents",
			"Add an agent (private unless an admin asks for global)", http.StatusCreated, s.handleCreateAgent).
			WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodGet, p+"/:id", "getAgent", "agents", "One agent", http.StatusOK, s.handleGetAgent),
		op(http.MethodPut, p+"/:id", "updateAgent", "agents",
			"Replace an agent's configuration (an omitted field becomes its zero value)", http.StatusOK, s.handleUpdateAgent).
			WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodDelete, p+"/:id", "deleteAgent", "agents",
			"Delete an agent (and its memories) no other agent hands off to", http.StatusNoContent, s.handleDeleteAgent).
			WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodPost, p+"/:id/scope", "setAgentScope", "agents",
			"Publish (admin) or unpublish (admin or author) an agent", http.StatusOK, s.handleAgentScope).
			WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodGet, p+"/:id/tools", "listAgentTools", "agents",
			"The tool surface the agent would get (schemas only, without a project's sandbox tools)", http.StatusOK, s.handleAgentTools),
		op(http.MethodGet, APIPrefix+"/tools", "listSelectableTools", "agents",
			"The tools an agent selects by name in its tools list: the built-in ones and the Go tools of the program embedding the workbench (origin native). MCP tools are listed by their servers",
			http.StatusOK, s.handleSelectableTools),
	}
}

func (s *Server) handleSelectableTools(c echo.Context, _ *NoBody) ([]ToolView, error) {
	return mapAll(s.deps.Agents.Selectable(), toolView), nil
}

func (s *Server) handleListAgents(c echo.Context, _ *NoBody) ([]AgentView, error) {
	list, err := s.deps.Agents.List(c.Request().Context(), caller(c))
	return mapAll(list, agentView), err
}

func (s *Server) handleCreateAgent(c echo.Context, req *CreateAgentRequest) (AgentView, error) {
	a, err := s.deps.Agents.Create(c.Request().Context(), caller(c), domain.Scope(req.Scope), req.AgentSpec)
	return agentView(a), err
}

func (s *Server) handleGetAgent(c echo.Context, _ *NoBody) (AgentView, error) {
	a, err := s.deps.Agents.Get(c.Request().Context(), caller(c), c.Param("id"))
	return agentView(a), err
}

func (s *Server) handleUpdateAgent(c echo.Context, req *domain.AgentSpec) (AgentView, error) {
	a, err := s.deps.Agents.Update(c.Request().Context(), caller(c), c.Param("id"), *req)
	return agentView(a), err
}

func (s *Server) handleDeleteAgent(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.Agents.Delete(c.Request().Context(), caller(c), c.Param("id"))
}

func (s *Server) handleAgentScope(c echo.Context, req *ScopeRequest) (AgentView, error) {
	a, err := s.deps.Agents.SetScope(c.Request().Context(), caller(c), c.Param("id"), domain.Scope(req.Scope))
	return agentView(a), err
}

func (s *Server) handleAgentTools(c echo.Context, _ *NoBody) ([]ToolView, error) {
	list, err := s.deps.Agents.Tools(c.Request().Context(), caller(c), c.Param("id"))
	return mapAll(list, toolView), err
}
