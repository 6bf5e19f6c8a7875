package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
)

// ApprovalView is a tool call waiting for a person's decision.
type ApprovalView struct {
	ID         string    `json:"id"`
	SessionID  string    `json:"session_id"`
	RunID      string    `json:"run_id"`
	ToolCallID string    `json:"tool_call_id"`
	ToolName   string    `json:"tool_name"`
	Arguments  string    `json:"arguments" doc:"The call's arguments, as JSON text"`
	CreatedAt  time.Time `json:"created_at"`
	TaskID     string    `json:"task_id,omitempty" doc:"The background task whose run waits on this call; absent for the session's own run"`
	// WorkflowPreview is a save_workflow call's review.
	WorkflowPreview *domain.WorkflowPreview `json:"workflow_preview,omitempty" doc:"For save_workflow: the proposed definition drawn, and on an update the stored one diffed line by line"`
}

func approvalView(a domain.Approval) ApprovalView {
	return ApprovalView{ID: a.ID, SessionID: a.SessionID, RunID: a.RunID, ToolCallID: a.ToolCallID, ToolName: a.ToolName,
		Arguments: a.Arguments, CreatedAt: a.CreatedAt, TaskID: a.TaskID, WorkflowPreview: a.Preview}
}

// ApproveRequest approves a call; the body may be omitted (scope once).
type ApproveRequest struct {
	Scope domain.ApprovalScope `json:"scope,omitempty" doc:"For exec_command: this call (once), this exact command for the rest of the session (same), every command (all)"`
}

// RejectRequest rejects a call; the reason reaches the model.
type RejectRequest struct {
	Reason string `json:"reason,omitempty"`
}

// DecisionView is the run after a decision: running when it resumed,
// interrupted while other calls still wait.
type DecisionView struct {
	RunID  string `json:"run_id"`
	Status string `json:"status" enum:"run_status"`
}

func (s *Server) approvalRoutes() []Route {
	return []Route{
		op(http.MethodGet, APIPrefix+"/sessions/:id/approvals", "listSessionApprovals", "approvals",
			"The session's pending tool approvals", http.StatusOK, s.handleSessionApprovals),
		op(http.MethodGet, APIPrefix+"/approvals", "listApprovals", "approvals",
			"The caller's pending tool approvals across sessions", http.StatusOK, s.handleApprovals),
		op(http.MethodPost, APIPrefix+"/approvals/:id/approve", "approveCall", "approvals",
			"Approve a call; the last decision resumes the same run", http.StatusOK, s.handleApprove).
			WithOptionalBody().WithRefusals(http.StatusConflict),
		op(http.MethodPost, APIPrefix+"/approvals/:id/reject", "rejectCall", "approvals",
			"Reject a call (the model is told, with the reason); the last decision resumes the same run", http.StatusOK, s.handleReject).
			WithOptionalBody().WithRefusals(http.StatusConflict),
	}
}

func (s *Server) handleSessionApprovals(c echo.Context, _ *NoBody) ([]ApprovalView, error) {
	list, err := s.deps.Runs.Approvals(c.Request().Context(), caller(c), c.Param("id"))
	return mapAll(list, approvalView), err
}

func (s *Server) handleApprovals(c echo.Context, _ *NoBody) ([]ApprovalView, error) {
	list, err := s.deps.Runs.Approvals(c.Request().Context(), caller(c), "")
	return mapAll(list, approvalView), err
}

func (s *Server) handleApprove(c echo.Context, req *ApproveRequest) (DecisionView, error) {
	run, err := s.deps.Runs.Decide(c.Request().Context(), caller(c), c.Param("id"), true, req.Scope, "")
	return DecisionView{RunID: run.ID, Status: string(run.Status)}, err
}

func (s *Server) handleReject(c echo.Context, req *RejectRequest) (DecisionView, error) {
	run, err := s.deps.Runs.Decide(c.Request().Context(), caller(c), c.Param("id"), false, "", req.Reason)
	return DecisionView{RunID: run.ID, Status: string(run.Status)}, err
}
