package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/skills"
)

// CreateSkillRequest adds a skill authored here.
type CreateSkillRequest struct {
	Content string `json:"content" required:"true" doc:"The SKILL.md: YAML frontmatter with name and description, then the instructions (at most 256 KiB)"`
	Scope   string `json:"scope,omitempty" enum:"scope" doc:"Default private"`
}

// UpdateSkillRequest replaces a skill's document.
type UpdateSkillRequest struct {
	Content string `json:"content" required:"true" doc:"The SKILL.md; name and description are read from it again. Editing an imported skill detaches it from its source"`
}

// SkillView is a skill as read.
type SkillView struct {
	ID           string    `json:"id"`
	Scope        string    `json:"scope" enum:"scope"`
	OwnerID      string    `json:"owner_id"`
	Name         string    `json:"name" doc:"From the frontmatter"`
	Description  string    `json:"description" doc:"From the frontmatter: what the model reads in the skills index"`
	ModelName    string    `json:"model_name" doc:"The name the model knows it by: owner/repo:name (GitHub import), host:name (another URL) or the bare name"`
	Content      string    `json:"content"`
	SourceRepo   string    `json:"source_repo,omitempty" doc:"Where an imported skill came from; its skills move scope as one group"`
	RepoLabel    string    `json:"repo_label,omitempty"`
	SourcePath   string    `json:"source_path,omitempty"`
	SourceCommit string    `json:"source_commit,omitempty"`
	Detached     bool      `json:"detached" doc:"An imported skill edited here: imports never overwrite it again"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

func skillView(k domain.Skill) SkillView {
	return SkillView{ID: k.ID, Scope: string(k.Scope), OwnerID: k.OwnerID, Name: k.Name, Description: k.Description,
		ModelName: k.ModelName(), Content: k.Content, SourceRepo: k.SourceRepo, RepoLabel: k.RepoLabel, SourcePath: k.SourcePath,
		SourceCommit: k.SourceCommit, Detached: k.Detached, CreatedAt: k.CreatedAt, UpdatedAt: k.UpdatedAt}
}

// SkillImportRequest imports skills from elsewhere.
type SkillImportRequest struct {
	URL string `json:"url" required:"true" doc:"https://github.com/owner/repo (every SKILL.md of the repository at its HEAD commit) or any http(s) URL of one raw SKILL.md"`
}

// SkillGroupScopeRequest moves a repository's skills between scopes.
type SkillGroupScopeRequest struct {
	SourceRepo string `json:"source_repo" required:"true" doc:"The skills' source_repo"`
	OwnerID    string `json:"owner_id,omitempty" doc:"Whose import (admins); default the caller's"`
	Scope      string `json:"scope" required:"true" enum:"scope"`
}

func (s *Server) skillRoutes() []Route {
	p := APIPrefix + "/skills"
	return []Route{
		op(http.MethodPost, APIPrefix+"/skill-imports", "importSkills", "skills",
			"Import skills from a GitHub repository (anonymously, pinned to its HEAD commit) or one raw SKILL.md URL: unedited skills are refreshed, ones edited here are left, new ones join the group's scope",
			http.StatusOK, s.handleImportSkills).WithRefusals(http.StatusConflict, http.StatusBadGateway),
		op(http.MethodPost, APIPrefix+"/skill-repos/scope", "setSkillRepoScope", "skills",
			"Publish (admin) or unpublish (admin or owner) every skill imported from one source, as one group",
			http.StatusOK, s.handleSkillRepoScope).WithRefusals(http.StatusForbidden, http.StatusNotFound, http.StatusConflict),
		op(http.MethodGet, p, "listSkills", "skills", "Skills the caller can see: shared ones first, then the caller's own",
			http.StatusOK, s.handleListSkills),
		op(http.MethodPost, p, "createSkill", "skills",
			"Add a skill from its SKILL.md (private unless an admin asks for global); name and description come from its frontmatter",
			http.StatusCreated, s.handleCreateSkill).WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodGet, p+"/:id", "getSkill", "skills", "One skill", http.StatusOK, s.handleGetSkill),
		op(http.MethodPut, p+"/:id", "updateSkill", "skills",
			"Replace a skill's SKILL.md; an imported skill edited here is detached from its source", http.StatusOK, s.handleUpdateSkill).
			WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodDelete, p+"/:id", "deleteSkill", "skills", "Delete a skill no agent selects", http.StatusNoContent,
			s.handleDeleteSkill).WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodPost, p+"/:id/scope", "setSkillScope", "skills",
			"Publish (admin) or unpublish (admin or author) a skill authored here (an imported one moves with its repository)",
			http.StatusOK, s.handleSkillScope).WithRefusals(http.StatusForbidden, http.StatusConflict),
	}
}

func (s *Server) handleListSkills(c echo.Context, _ *NoBody) ([]SkillView, error) {
	list, err := s.deps.Skills.List(c.Request().Context(), caller(c))
	return mapAll(list, skillView), err
}

func (s *Server) handleCreateSkill(c echo.Context, req *CreateSkillRequest) (SkillView, error) {
	k, err := s.deps.Skills.Create(c.Request().Context(), caller(c), domain.Scope(req.Scope), req.Content)
	return skillView(k), err
}

func (s *Server) handleGetSkill(c echo.Context, _ *NoBody) (SkillView, error) {
	k, err := s.deps.Skills.Get(c.Request().Context(), caller(c), c.Param("id"))
	return skillView(k), err
}

func (s *Server) handleUpdateSkill(c echo.Context, req *UpdateSkillRequest) (SkillView, error) {
	k, err := s.deps.Skills.Update(c.Request().Context(), caller(c), c.Param("id"), req.Content)
	return skillView(k), err
}

func (s *Server) handleDeleteSkill(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.Skills.Delete(c.Request().Context(), caller(c), c.Param("id"))
}

func (s *Server) handleSkillScope(c echo.Context, req *ScopeRequest) (SkillView, error) {
	k, err := s.deps.Skills.SetScope(c.Request().Context(), caller(c), c.Param("id"), domain.Scope(req.Scope))
	return skillView(k), err
}

func (s *Server) handleImportSkills(c echo.Context, req *SkillImportRequest) (skills.ImportResult, error) {
	return s.deps.SkillImports.Import(c.Request().Context(), caller(c), req.URL)
}

func (s *Server) handleSkillRepoScope(c echo.Context, req *SkillGroupScopeRequest) ([]SkillView, error) {
	list, err := s.deps.Skills.SetGroupScope(c.Request().Context(), caller(c), req.SourceRepo, req.OwnerID, domain.Scope(req.Scope))
	return mapAll(list, skillView), err
}
