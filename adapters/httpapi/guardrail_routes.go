package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
)

// GuardrailInput is what an admin writes about a guardrail.
type GuardrailInput struct {
	Name        string   `json:"name" required:"true" doc:"The guardrail's identity: agents reference it by name"`
	Description string   `json:"description,omitempty"`
	Stages      []string `json:"stages" required:"true" enum:"guardrail_stage"`
	Mode        string   `json:"mode" required:"true" enum:"guardrail_mode"`
	Pattern     string   `json:"pattern,omitempty" doc:"For regex: an RE2 pattern, compiled at save time"`
	MaxChars    int      `json:"max_chars,omitempty" doc:"For max_length: the most characters allowed"`
	Blocking    bool     `json:"blocking,omitempty" doc:"At the input stage: finish before the first model call instead of racing it"`
}

func (in GuardrailInput) core() domain.Guardrail {
	stages := make([]domain.GuardrailStage, len(in.Stages))
	for i, s := range in.Stages {
		stages[i] = domain.GuardrailStage(s)
	}
	return domain.Guardrail{Name: in.Name, Description: in.Description, Stages: stages, Mode: domain.GuardrailMode(in.Mode),
		Pattern: in.Pattern, MaxChars: in.MaxChars, Blocking: in.Blocking}
}

// GuardrailView is a guardrail as read.
type GuardrailView struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Stages      []string  `json:"stages" enum:"guardrail_stage"`
	Mode        string    `json:"mode" required:"true" enum:"guardrail_mode"`
	Pattern     string    `json:"pattern"`
	MaxChars    int       `json:"max_chars"`
	Blocking    bool      `json:"blocking"`
	Builtin     bool      `json:"builtin" doc:"Shipped with the server"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func guardrailView(g domain.Guardrail) GuardrailView {
	stages := make([]string, len(g.Stages))
	for i, s := range g.Stages {
		stages[i] = string(s)
	}
	return GuardrailView{ID: g.ID, Name: g.Name, Description: g.Description, Stages: stages, Mode: string(g.Mode),
		Pattern: g.Pattern, MaxChars: g.MaxChars, Blocking: g.Blocking, Builtin: g.Builtin, CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt}
}

func (s *Server) guardrailRoutes() []Route {
	p := APIPrefix + "/guardrails"
	return []Route{
		op(http.MethodGet, p, "listGuardrails", "guardrails", "Every guardrail, built-ins first", http.StatusOK, s.handleListGuardrails),
		op(http.MethodPost, p, "createGuardrail", "guardrails", "Add a guardrail (admin only)", http.StatusCreated, s.handleCreateGuardrail).
			WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodGet, p+"/:id", "getGuardrail", "guardrails", "One guardrail", http.StatusOK, s.handleGetGuardrail),
		op(http.MethodPut, p+"/:id", "updateGuardrail", "guardrails",
			"Replace a guardrail (admin only); a referenced one cannot be renamed", http.StatusOK, s.handleUpdateGuardrail).
			WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodDelete, p+"/:id", "deleteGuardrail", "guardrails",
			"Delete a guardrail no agent uses (admin only)", http.StatusNoContent, s.handleDeleteGuardrail).
			WithRefusals(http.StatusForbidden, http.StatusConflict),
	}
}

func (s *Server) handleListGuardrails(c echo.Context, _ *NoBody) ([]GuardrailView, error) {
	list, err := s.deps.Guardrails.List(c.Request().Context())
	return mapAll(list, guardrailView), err
}

func (s *Server) handleCreateGuardrail(c echo.Context, req *GuardrailInput) (GuardrailView, error) {
	g, err := s.deps.Guardrails.Create(c.Request().Context(), caller(c), req.core())
	return guardrailView(g), err
}

func (s *Server) handleGetGuardrail(c echo.Context, _ *NoBody) (GuardrailView, error) {
	g, err := s.deps.Guardrails.Get(c.Request().Context(), c.Param("id"))
	return guardrailView(g), err
}

func (s *Server) handleUpdateGuardrail(c echo.Context, req *GuardrailInput) (GuardrailView, error) {
	g, err := s.deps.Guardrails.Update(c.Request().Context(), caller(c), c.Param("id"), req.core())
	return guardrailView(g), err
}

func (s *Server) handleDeleteGuardrail(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.Guardrails.Delete(c.Request().Context(), caller(c), c.Param("id"))
}
