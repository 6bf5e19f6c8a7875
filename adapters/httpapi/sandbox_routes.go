package httpapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/sandboxes"
)

// SandboxInput is what an admin writes about a sandbox (PUT replaces it
// whole).
type SandboxInput struct {
	Name     string          `json:"name" required:"true"`
	Type     string          `json:"type" enum:"sandbox_type" doc:"Required to create; an update that leaves it out keeps the stored type"`
	Config   json.RawMessage `json:"config" required:"true" doc:"The type's config: unknown keys are dropped, a value of the wrong JSON type is a 400; secret fields are write-only (******** keeps the stored value). docker: image (required), host, ssh_password*, ssh_key*, runtime, user, network, memory_mb, cpus, max_read_file_bytes. e2b: template_id (required), api_url, domain, api_key*, headers (object of name: value*), data_plane_auth, timeout_seconds, auto_pause, allow_internet, max_read_file_bytes. (* secret)"`
	Prompt   string          `json:"prompt,omitempty" doc:"Appended to the instructions of agents in sessions bound to a project here"`
	Revision *int64          `json:"revision,omitempty" doc:"The revision the edit was based on: makes the write a compare-and-set (409 when it moved)"`
}

func (in SandboxInput) core() sandboxes.SandboxInput {
	return sandboxes.SandboxInput{Name: in.Name, Type: in.Type, Config: in.Config, Prompt: in.Prompt, Revision: in.Revision}
}

// SandboxSupportsView are a type's capability flags.
type SandboxSupportsView struct {
	Runs       bool `json:"runs" doc:"This server can run the type: Test, project instances and terminals work. false: the config is validated and stored, but nothing runs it yet"`
	Rebuild    bool `json:"rebuild" doc:"The container can be replaced while the tree survives"`
	PublicHost bool `json:"public_host" doc:"Ports are reachable on a public host name"`
}

func (s *Server) supportsView(typ string) SandboxSupportsView {
	sup := s.deps.Sandboxes.Supports(typ)
	return SandboxSupportsView{Runs: sup.Runs, Rebuild: sup.Rebuild, PublicHost: sup.PublicHost}
}

// SandboxTypeView is one sandbox type and its capability flags, so a client
// can tell which types to offer before any sandbox of them exists.
type SandboxTypeView struct {
	Type     string              `json:"type" enum:"sandbox_type"`
	Supports SandboxSupportsView `json:"supports"`
}

// SandboxView is a sandbox as read: its canonical config, secrets masked.
type SandboxView struct {
	ID           string              `json:"id"`
	Name         string              `json:"name"`
	Type         string              `json:"type" enum:"sandbox_type"`
	Config       json.RawMessage     `json:"config"`
	Prompt       string              `json:"prompt"`
	Supports     SandboxSupportsView `json:"supports"`
	Revision     int64               `json:"revision"`
	ProjectCount int                 `json:"project_count" doc:"Projects living on it (they freeze its identity and block its delete)"`
	SSHHostKey   *SSHHostKeyView     `json:"ssh_host_key,omitempty" doc:"Read-only: the host key pinned for an ssh:// docker host; absent until the first connection pins one"`
	CreatedAt    time.Time           `json:"created_at"`
	UpdatedAt    time.Time           `json:"updated_at"`
}

// SSHHostKeyView is the host key pinned for a sandbox's ssh:// daemon: the
// first key it presented; a connection presenting another is refused
// (502) until an admin resets the pin. A public key, not a secret.
type SSHHostKeyView struct {
	Type        string    `json:"type" doc:"The key's algorithm, e.g. ssh-ed25519"`
	Fingerprint string    `json:"fingerprint" doc:"SHA256:… as ssh-keygen -lf prints it"`
	PublicKey   string    `json:"public_key" doc:"The key in authorized_keys / known_hosts form"`
	PinnedAt    time.Time `json:"pinned_at" doc:"When the key was first met"`
}

func (s *Server) sandboxView(sb domain.Sandbox, projects int) SandboxView {
	config, _ := json.Marshal(sandboxes.ConfigView(sb))
	v := SandboxView{ID: sb.ID, Name: sb.Name, Type: sb.Type, Config: config, Prompt: sb.Prompt,
		Supports: s.supportsView(sb.Type), Revision: sb.Revision,
		ProjectCount: projects, CreatedAt: sb.CreatedAt, UpdatedAt: sb.UpdatedAt}
	if k := sb.SSHHostKey; !k.IsZero() {
		v.SSHHostKey = &SSHHostKeyView{Type: k.Type(), Fingerprint: k.Fingerprint(), PublicKey: k.Key, PinnedAt: k.PinnedAt}
	}
	return v
}

// SandboxTestView is what `echo ok` in a throw-away instance did.
type SandboxTestView struct {
	OK     bool   `json:"ok" doc:"false: the host was reached and the command ran but failed"`
	Output string `json:"output"`
}

// ContainerView is one of this server's containers on a daemon.
type ContainerView struct {
	Name      string `json:"name"`
	ProjectID string `json:"project_id"`
	State     string `json:"state"`
	Image     string `json:"image"`
}

func (s *Server) sandboxRoutes() []Route {
	p := APIPrefix + "/sandboxes"
	return []Route{
		op(http.MethodGet, APIPrefix+"/sandbox-types", "listSandboxTypes", "sandboxes",
			"The sandbox types and their capability flags (whether this server runs the type yet, rebuild, public host)",
			http.StatusOK, s.handleSandboxTypes),
		op(http.MethodGet, p, "listSandboxes", "sandboxes", "Every sandbox (host configuration: everyone reads)", http.StatusOK, s.handleListSandboxes),
		op(http.MethodPost, p, "createSandbox", "sandboxes", "Add a sandbox (admins)", http.StatusCreated, s.handleCreateSandbox).
			WithRequired("type").WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodGet, p+"/:id", "getSandbox", "sandboxes", "One sandbox", http.StatusOK, s.handleGetSandbox),
		op(http.MethodPut, p+"/:id", "updateSandbox", "sandboxes",
			"Replace a sandbox (admins): identity frozen while projects live on it; a content change replaces their containers at next use",
			http.StatusOK, s.handleUpdateSandbox).WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodDelete, p+"/:id", "deleteSandbox", "sandboxes", "Delete a sandbox no project lives on (admins)",
			http.StatusNoContent, s.handleDeleteSandbox).WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodPost, p+"/:id/test", "testSandbox", "sandboxes",
			"Run echo ok in a throw-away instance (admins): 200 {ok:false} ran but failed; 502 the host could not be reached",
			http.StatusOK, s.handleTestSandbox).WithRefusals(http.StatusBadRequest, http.StatusForbidden, http.StatusBadGateway),
		op(http.MethodDelete, p+"/:id/ssh-host-key", "resetSandboxSSHHostKey", "sandboxes",
			"Forget the host key pinned for the sandbox's ssh:// host (admins): the next connection pins the key it meets",
			http.StatusNoContent, s.handleResetSSHHostKey).WithRefusals(http.StatusForbidden),
		op(http.MethodGet, p+"/:id/containers", "listSandboxContainers", "sandboxes",
			"This server's containers on a docker sandbox's daemon (admins; docker only)", http.StatusOK, s.handleListContainers).
			WithRefusals(http.StatusBadRequest, http.StatusForbidden, http.StatusBadGateway),
		op(http.MethodPost, p+"/:id/containers/:name/stop", "stopSandboxContainer", "sandboxes",
			"Stop one of this server's containers by name (admins; docker only)", http.StatusNoContent, s.handleStopContainer).
			WithRefusals(http.StatusBadRequest, http.StatusForbidden, http.StatusBadGateway),
		op(http.MethodDelete, p+"/:id/containers/:name", "removeSandboxContainer", "sandboxes",
			"Remove one of this server's containers by name, keeping its volume (admins; docker only)", http.StatusNoContent, s.handleRemoveContainer).
			WithRefusals(http.StatusBadRequest, http.StatusForbidden, http.StatusBadGateway),
	}
}

func (s *Server) handleSandboxTypes(_ echo.Context, _ *NoBody) ([]SandboxTypeView, error) {
	out := make([]SandboxTypeView, 0, len(domain.SandboxTypes))
	for name := range domain.SandboxTypes {
		out = append(out, SandboxTypeView{Type: name, Supports: s.supportsView(name)})
	}
	slices.SortFunc(out, func(a, b SandboxTypeView) int { return strings.Compare(a.Type, b.Type) })
	return out, nil
}

func (s *Server) handleListSandboxes(c echo.Context, _ *NoBody) ([]SandboxView, error) {
	ctx := c.Request().Context()
	list, err := s.deps.Sandboxes.ListSandboxes(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]SandboxView, 0, len(list))
	for _, sb := range list {
		n, err := s.deps.Sandboxes.ProjectCount(ctx, sb.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, s.sandboxView(sb, n))
	}
	return out, nil
}

func (s *Server) sandboxAnswer(c echo.Context, sb domain.Sandbox, err error) (SandboxView, error) {
	if err != nil {
		return SandboxView{}, err
	}
	n, err := s.deps.Sandboxes.ProjectCount(c.Request().Context(), sb.ID)
	return s.sandboxView(sb, n), err
}

func (s *Server) handleCreateSandbox(c echo.Context, req *SandboxInput) (SandboxView, error) {
	sb, err := s.deps.Sandboxes.CreateSandbox(c.Request().Context(), caller(c), req.core())
	return s.sandboxAnswer(c, sb, err)
}

func (s *Server) handleGetSandbox(c echo.Context, _ *NoBody) (SandboxView, error) {
	sb, err := s.deps.Sandboxes.GetSandbox(c.Request().Context(), c.Param("id"))
	return s.sandboxAnswer(c, sb, err)
}

func (s *Server) handleUpdateSandbox(c echo.Context, req *SandboxInput) (SandboxView, error) {
	sb, err := s.deps.Sandboxes.UpdateSandbox(c.Request().Context(), caller(c), c.Param("id"), req.core())
	return s.sandboxAnswer(c, sb, err)
}

func (s *Server) handleDeleteSandbox(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.Sandboxes.DeleteSandbox(c.Request().Context(), caller(c), c.Param("id"))
}

func (s *Server) handleTestSandbox(c echo.Context, _ *NoBody) (SandboxTestView, error) {
	ok, out, err := s.deps.Sandboxes.TestSandbox(c.Request().Context(), caller(c), c.Param("id"))
	return SandboxTestView{OK: ok, Output: out}, err
}

func (s *Server) handleResetSSHHostKey(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.Sandboxes.ResetSSHHostKey(c.Request().Context(), caller(c), c.Param("id"))
}

func (s *Server) handleListContainers(c echo.Context, _ *NoBody) ([]ContainerView, error) {
	list, err := s.deps.Sandboxes.Containers(c.Request().Context(), caller(c), c.Param("id"))
	out := make([]ContainerView, 0, len(list))
	for _, ci := range list {
		out = append(out, ContainerView{Name: ci.Name, ProjectID: ci.ProjectID, State: ci.State, Image: ci.Image})
	}
	return out, err
}

func (s *Server) handleStopContainer(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.Sandboxes.StopContainer(c.Request().Context(), caller(c), c.Param("id"), c.Param("name"))
}

func (s *Server) handleRemoveContainer(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.Sandboxes.RemoveContainer(c.Request().Context(), caller(c), c.Param("id"), c.Param("name"))
}
