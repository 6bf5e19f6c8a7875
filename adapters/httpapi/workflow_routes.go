package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/tasks"
)

// CreateWorkflowRequest adds a workflow; scope global is admin-only.
type CreateWorkflowRequest struct {
	domain.WorkflowSpec
	Scope string `json:"scope,omitempty" enum:"scope" doc:"Default private"`
}

// WorkflowView is a workflow definition as read.
type WorkflowView struct {
	ID      string `json:"id"`
	Scope   string `json:"scope" enum:"scope"`
	OwnerID string `json:"owner_id"`
	domain.WorkflowSpec
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func workflowView(w domain.Workflow) WorkflowView {
	return WorkflowView{ID: w.ID, Scope: string(w.Scope), OwnerID: w.OwnerID, WorkflowSpec: w.WorkflowSpec, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
}

// StartWorkflowRequest starts an execution into a conversation.
type StartWorkflowRequest struct {
	SessionID string `json:"session_id" required:"true" doc:"The conversation the execution reports back to"`
	Input     string `json:"input" required:"true" doc:"The brief: it leads the first step, which sees nothing of the conversation"`
	ProjectID string `json:"project_id,omitempty" doc:"Binds an unbound conversation to this project first (a bound one keeps its own)"`
}

func (s *Server) workflowRoutes() []Route {
	p := APIPrefix + "/workflows"
	return []Route{
		op(http.MethodGet, p, "listWorkflows", "workflows",
			"Workflows the caller can see: shared ones first, then the caller's own", http.StatusOK, s.handleListWorkflows),
		op(http.MethodPost, p, "createWorkflow", "workflows",
			"Add a workflow (private unless an admin asks for global); step ids are assigned, and edges may name steps by name",
			http.StatusCreated, s.handleCreateWorkflow).WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodGet, p+"/:id", "getWorkflow", "workflows", "One workflow", http.StatusOK, s.handleGetWorkflow),
		op(http.MethodPut, p+"/:id", "updateWorkflow", "workflows",
			"Replace a workflow's definition: a step keeps its id by sending it, a step without one is new; executions in flight keep their snapshot",
			http.StatusOK, s.handleUpdateWorkflow).WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodDelete, p+"/:id", "deleteWorkflow", "workflows",
			"Delete a workflow (executions in flight run on their snapshot)", http.StatusNoContent, s.handleDeleteWorkflow).
			WithRefusals(http.StatusForbidden),
		op(http.MethodPost, p+"/:id/scope", "setWorkflowScope", "workflows",
			"Publish (admin) or unpublish (admin or author) a workflow", http.StatusOK, s.handleWorkflowScope).
			WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodPost, p+"/:id/runs", "startWorkflow", "workflows",
			"Start an execution into a conversation: a background task of kind workflow, listed, stopped and retried as a task",
			http.StatusCreated, s.handleStartWorkflow).WithRefusals(http.StatusConflict, http.StatusServiceUnavailable),
	}
}

func (s *Server) handleListWorkflows(c echo.Context, _ *NoBody) ([]WorkflowView, error) {
	list, err := s.deps.Workflows.List(c.Request().Context(), caller(c))
	return mapAll(list, workflowView), err
}

func (s *Server) handleCreateWorkflow(c echo.Context, req *CreateWorkflowRequest) (WorkflowView, error) {
	w, err := s.deps.Workflows.Create(c.Request().Context(), caller(c), domain.Scope(req.Scope), req.WorkflowSpec)
	return workflowView(w), err
}

func (s *Server) handleGetWorkflow(c echo.Context, _ *NoBody) (WorkflowView, error) {
	w, err := s.deps.Workflows.Get(c.Request().Context(), caller(c), c.Param("id"))
	return workflowView(w), err
}

func (s *Server) handleUpdateWorkflow(c echo.Context, req *domain.WorkflowSpec) (WorkflowView, error) {
	w, err := s.deps.Workflows.Update(c.Request().Context(), caller(c), c.Param("id"), *req)
	return workflowView(w), err
}

func (s *Server) handleDeleteWorkflow(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.Workflows.Delete(c.Request().Context(), caller(c), c.Param("id"))
}

func (s *Server) handleWorkflowScope(c echo.Context, req *ScopeRequest) (WorkflowView, error) {
	w, err := s.deps.Workflows.SetScope(c.Request().Context(), caller(c), c.Param("id"), domain.Scope(req.Scope))
	return workflowView(w), err
}

func (s *Server) handleStartWorkflow(c echo.Context, req *StartWorkflowRequest) (TaskView, error) {
	t, err := s.deps.Tasks.StartWorkflow(c.Request().Context(), caller(c), tasks.WorkflowStart{WorkflowID: c.Param("id"),
		SessionID: req.SessionID, Input: req.Input, ProjectID: req.ProjectID})
	return taskView(t), err
}
