package httpapi

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/tasks"
	"github.com/agents-server/agents-server/ports"
)

// TaskView is a background task as the API reads it.
type TaskView struct {
	domain.TaskInfo
	SessionName string `json:"session_name,omitempty" doc:"The parent conversation's name (in the cross-session list)"`
}

// TaskListView is a page of the caller's tasks.
type TaskListView struct {
	Tasks []TaskView `json:"tasks"`
	Total int        `json:"total" doc:"How many tasks match, across every page"`
}

func taskView(t domain.Task) TaskView { return TaskView{TaskInfo: t.Info()} }

func (s *Server) taskRoutes() []Route {
	p := APIPrefix + "/tasks"
	return []Route{
		op(http.MethodGet, p, "listTasks", "tasks", "The caller's background tasks, newest first, with their conversation's name",
			http.StatusOK, s.handleListTasks).
			WithQuery(QueryParam{Name: "kind", Type: "string", Description: "Only tasks of this kind (agent or workflow)"},
				QueryParam{Name: "live", Type: "boolean", Description: "Only tasks not final (working, waiting for a decision, queued)"},
				QueryParam{Name: "limit", Type: "integer", Description: "Page size (default 100)", Bound: between(1, tasks.MaxPage)},
				QueryParam{Name: "offset", Type: "integer", Description: "Tasks to skip", Bound: atLeast(0)}).
			WithRefusals(http.StatusBadRequest),
		op(http.MethodGet, p+"/:id", "getTask", "tasks", "One task", http.StatusOK, s.handleGetTask),
		op(http.MethodPost, p+"/:id/stop", "stopTask", "tasks", "Stop a live task (it reports nothing back)", http.StatusOK, s.handleStopTask).
			WithRefusals(http.StatusConflict),
		op(http.MethodPost, p+"/:id/retry", "retryTask", "tasks",
			"Run a failed task again (attempt+1, resuming from its progress); refused when it is not failed, out of attempts or its conversation is at the live-task cap",
			http.StatusOK, s.handleRetryTask).WithRefusals(http.StatusConflict),
		op(http.MethodPost, p+"/:id/dismiss", "dismissTask", "tasks", "Hide a final task from the live lists (a retry brings it back)",
			http.StatusOK, s.handleDismissTask).WithRefusals(http.StatusConflict),
		op(http.MethodGet, APIPrefix+"/sessions/:id/tasks", "listSessionTasks", "tasks", "The tasks a conversation started, newest first",
			http.StatusOK, s.handleSessionTasks),
	}
}

func (s *Server) handleListTasks(c echo.Context, _ *NoBody) (TaskListView, error) {
	f := ports.TaskFilter{Kind: domain.TaskKind(c.QueryParam("kind"))}
	var err error
	if f.Live, err = boolQuery(c, "live"); err != nil {
		return TaskListView{}, err
	}
	if f.Limit, err = limitQuery(c); err != nil {
		return TaskListView{}, err
	}
	if raw := c.QueryParam("offset"); raw != "" {
		if f.Offset, err = strconv.Atoi(raw); err != nil || f.Offset < 0 {
			return TaskListView{}, errs.Field("offset", "must be a whole number, 0 or more")
		}
	}
	list, total, err := s.deps.Tasks.List(c.Request().Context(), caller(c), f)
	out := TaskListView{Tasks: make([]TaskView, len(list)), Total: total}
	for i, t := range list {
		out.Tasks[i] = TaskView{TaskInfo: t.Info(), SessionName: t.SessionName}
	}
	return out, err
}

func (s *Server) handleGetTask(c echo.Context, _ *NoBody) (TaskView, error) {
	t, err := s.deps.Tasks.Get(c.Request().Context(), caller(c), c.Param("id"))
	return taskView(t), err
}

func (s *Server) handleStopTask(c echo.Context, _ *NoBody) (TaskView, error) {
	t, err := s.deps.Tasks.Stop(c.Request().Context(), caller(c), c.Param("id"))
	return taskView(t), err
}

func (s *Server) handleRetryTask(c echo.Context, _ *NoBody) (TaskView, error) {
	t, err := s.deps.Tasks.Retry(c.Request().Context(), caller(c), c.Param("id"))
	return taskView(t), err
}

func (s *Server) handleDismissTask(c echo.Context, _ *NoBody) (TaskView, error) {
	t, err := s.deps.Tasks.Dismiss(c.Request().Context(), caller(c), c.Param("id"))
	return taskView(t), err
}

func (s *Server) handleSessionTasks(c echo.Context, _ *NoBody) ([]TaskView, error) {
	list, err := s.deps.Tasks.SessionTasks(c.Request().Context(), caller(c), c.Param("id"))
	return mapAll(list, taskView), err
}
