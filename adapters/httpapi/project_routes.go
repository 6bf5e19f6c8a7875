package httpapi

import (
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/sandboxes"
	"github.com/agents-server/agents-server/core/secrets"
)

// EnvVar is one environment variable: the value is write-only.
type EnvVar struct {
	Name  string `json:"name" required:"true"`
	Value string `json:"value" doc:"Write-only: reads are ********; sending ******** back keeps the stored value of this name"`
}

// ProjectInput is what an owner writes about a project.
type ProjectInput struct {
	Name      string    `json:"name" required:"true"`
	SandboxID string    `json:"sandbox_id" doc:"The sandbox it lives on (required to create; an update that leaves it out keeps it); a move stays at the same destination (409)"`
	Env       *[]EnvVar `json:"env,omitempty" doc:"The container's environment; absent keeps it. A change replaces the container at the next use and closes its terminals"`
	Revision  *int64    `json:"revision,omitempty" doc:"The revision the edit was based on: makes the write a compare-and-set (409 when it moved)"`
}

func (in ProjectInput) core() sandboxes.ProjectInput {
	out := sandboxes.ProjectInput{Name: in.Name, SandboxID: in.SandboxID, Revision: in.Revision}
	if in.Env != nil {
		env := make([]domain.EnvVar, 0, len(*in.Env))
		for _, v := range *in.Env {
			env = append(env, domain.EnvVar{Name: v.Name, Value: v.Value})
		}
		out.Env = &env
	}
	return out
}

// ProjectView is a project as read.
type ProjectView struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	SandboxID    string    `json:"sandbox_id"`
	OwnerID      string    `json:"owner_id"`
	SessionCount int       `json:"session_count" doc:"Sessions bound to it (they block its delete)"`
	StorageHint  string    `json:"storage_hint,omitempty" doc:"Where the files live; admins only"`
	Env          *[]EnvVar `json:"env,omitempty" doc:"Only GET /projects/{id}, only to the owner: names with masked values"`
	Revision     int64     `json:"revision"`
	Generation   int64     `json:"generation" doc:"The runtime generation: moves when the environment or the sandbox's content changes"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

func projectView(l sandboxes.Listed) ProjectView {
	return ProjectView{ID: l.ID, Name: l.Name, SandboxID: l.SandboxID, OwnerID: l.OwnerID, SessionCount: l.SessionCount,
		StorageHint: l.StorageHint, Revision: l.Revision, Generation: l.Generation, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
}

// ProjectDeletedView answers a delete: the row is gone; storage_error names
// storage left behind for the operator.
type ProjectDeletedView struct {
	Deleted      bool   `json:"deleted"`
	StorageError string `json:"storage_error,omitempty"`
}

// ProjectSandboxView is where a project's instance stands.
type ProjectSandboxView struct {
	State string `json:"state" enum:"sandbox_state"`
}

// ProjectStopView answers a stop: false while a run or terminal still uses
// the instance (it stops when that work ends).
type ProjectStopView struct {
	Stopped bool `json:"stopped"`
}

func (s *Server) projectRoutes() []Route {
	p := APIPrefix + "/projects"
	return []Route{
		op(http.MethodGet, p, "listProjects", "projects", "The caller's projects; admins may ask for every owner's", http.StatusOK, s.handleListProjects).
			WithQuery(QueryParam{Name: "all", Type: "boolean", Description: "Every owner's projects (admins)"}).
			WithRefusals(http.StatusBadRequest, http.StatusForbidden),
		op(http.MethodPost, p, "createProject", "projects", "Add a project on a sandbox", http.StatusCreated, s.handleCreateProject).
			WithRequired("sandbox_id").WithRefusals(http.StatusConflict),
		op(http.MethodGet, p+"/:id", "getProject", "projects", "One project (its environment, masked, to its owner only)", http.StatusOK, s.handleGetProject),
		op(http.MethodPut, p+"/:id", "updateProject", "projects", "Replace a project's name, sandbox and environment (owner)",
			http.StatusOK, s.handleUpdateProject).WithRefusals(http.StatusConflict),
		op(http.MethodDelete, p+"/:id", "deleteProject", "projects",
			"Delete a project no session binds, with its container and volume (owner or admin)", http.StatusOK, s.handleDeleteProject).
			WithRefusals(http.StatusConflict),
		op(http.MethodGet, p+"/:id/sandbox", "getProjectSandbox", "projects", "The project's instance: absent, stopped or running",
			http.StatusOK, s.handleProjectState).WithRefusals(http.StatusBadRequest, http.StatusConflict, http.StatusBadGateway),
		op(http.MethodPost, p+"/:id/sandbox/start", "startProjectSandbox", "projects", "Provision and start the project's instance",
			http.StatusOK, s.handleProjectStart).WithRefusals(http.StatusBadRequest, http.StatusConflict, http.StatusBadGateway),
		op(http.MethodPost, p+"/:id/sandbox/stop", "stopProjectSandbox", "projects",
			"Stop the project's instance, keeping the tree; stopped:false while a run or terminal uses it (it stops when they end)",
			http.StatusOK, s.handleProjectStop).WithRefusals(http.StatusBadRequest, http.StatusConflict, http.StatusBadGateway),
		op(http.MethodPost, p+"/:id/sandbox/rebuild", "rebuildProjectSandbox", "projects",
			"Replace the project's container with a fresh one, keeping the tree (docker only)", http.StatusOK, s.handleProjectRebuild).
			WithRefusals(http.StatusBadRequest, http.StatusConflict, http.StatusBadGateway),
		raw(http.MethodGet, p+"/:id/export", "exportProject", "projects",
			"The project's /workspace as an uncompressed tar (owner only; audited). A failure mid-stream truncates the archive",
			"application/x-tar", s.handleProjectExport).WithRefusals(http.StatusBadRequest, http.StatusConflict, http.StatusBadGateway),
	}
}

func (s *Server) handleListProjects(c echo.Context, _ *NoBody) ([]ProjectView, error) {
	all, err := boolQuery(c, "all")
	if err != nil {
		return nil, err
	}
	list, err := s.deps.Sandboxes.ListProjects(c.Request().Context(), caller(c), all)
	return mapAll(list, projectView), err
}

func (s *Server) handleCreateProject(c echo.Context, req *ProjectInput) (ProjectView, error) {
	l, err := s.deps.Sandboxes.CreateProject(c.Request().Context(), caller(c), req.core())
	return projectView(l), err
}

func (s *Server) handleGetProject(c echo.Context, _ *NoBody) (ProjectView, error) {
	p := caller(c)
	l, err := s.deps.Sandboxes.GetProject(c.Request().Context(), p, c.Param("id"))
	if err != nil {
		return ProjectView{}, err
	}
	v := projectView(l)
	if l.OwnerID == p.User.ID {
		env := make([]EnvVar, 0, len(l.Env))
		for _, e := range l.Env {
			env = append(env, EnvVar{Name: e.Name, Value: secrets.Masked(e.Value)})
		}
		v.Env = &env
	}
	return v, nil
}

func (s *Server) handleUpdateProject(c echo.Context, req *ProjectInput) (ProjectView, error) {
	l, err := s.deps.Sandboxes.UpdateProject(c.Request().Context(), caller(c), c.Param("id"), req.core())
	return projectView(l), err
}

func (s *Server) handleDeleteProject(c echo.Context, _ *NoBody) (ProjectDeletedView, error) {
	res, err := s.deps.Sandboxes.DeleteProject(c.Request().Context(), caller(c), c.Param("id"))
	return ProjectDeletedView{Deleted: err == nil, StorageError: res.StorageError}, err
}

func (s *Server) handleProjectState(c echo.Context, _ *NoBody) (ProjectSandboxView, error) {
	st, err := s.deps.Sandboxes.State(c.Request().Context(), caller(c), c.Param("id"))
	return ProjectSandboxView{State: string(st)}, err
}

func (s *Server) handleProjectStart(c echo.Context, _ *NoBody) (ProjectSandboxView, error) {
	st, err := s.deps.Sandboxes.Start(c.Request().Context(), caller(c), c.Param("id"))
	return ProjectSandboxView{State: string(st)}, err
}

func (s *Server) handleProjectStop(c echo.Context, _ *NoBody) (ProjectStopView, error) {
	stopped, err := s.deps.Sandboxes.Stop(c.Request().Context(), caller(c), c.Param("id"))
	return ProjectStopView{Stopped: stopped}, err
}

func (s *Server) handleProjectRebuild(c echo.Context, _ *NoBody) (ProjectSandboxView, error) {
	err := s.deps.Sandboxes.Rebuild(c.Request().Context(), caller(c), c.Param("id"))
	return ProjectSandboxView{State: "running"}, err
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func (s *Server) handleProjectExport(c echo.Context) error {
	p := caller(c)
	ctx := c.Request().Context()
	l, err := s.deps.Sandboxes.GetProject(ctx, p, c.Param("id"))
	if err != nil {
		return err
	}
	write, err := s.deps.Sandboxes.Export(ctx, p, l.ID)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "application/x-tar")
	h.Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s.tar"`, unsafeFileChars.ReplaceAllString(l.Name, "_")))
	c.Response().WriteHeader(http.StatusOK)
	if err := write(c.Response()); err != nil {
		s.deps.Log.Warn("project export broke off", "project_id", l.ID, "err", err)
	}
	return nil
}
