package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// CreateUserRequest adds a user (admin only).
type CreateUserRequest struct {
	Username string `json:"username" required:"true"`
	Password string `json:"password" required:"true"`
	Role     string `json:"role,omitempty" enum:"role" doc:"Defaults to member"`
}

// UpdateUserRequest changes a user (admin only); absent fields stay.
type UpdateUserRequest struct {
	Role     *string `json:"role,omitempty" enum:"role"`
	Password *string `json:"password,omitempty"`
	Disabled *bool   `json:"disabled,omitempty" doc:"Disabling revokes every token of the user"`
}

func (s *Server) userRoutes() []Route {
	return []Route{
		op(http.MethodGet, APIPrefix+"/auth/users", "listUsers", "users",
			"Every user (admin only)", http.StatusOK, s.handleListUsers).WithRefusals(http.StatusForbidden),
		op(http.MethodPost, APIPrefix+"/auth/users", "createUser", "users",
			"Add a user (admin only)", http.StatusCreated, s.handleCreateUser).WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodPatch, APIPrefix+"/auth/users/:id", "updateUser", "users",
			"Change a user's role, password or disabled flag (admin only); answers 204",
			http.StatusNoContent, s.handleUpdateUser).WithRefusals(http.StatusForbidden, http.StatusConflict),
		op(http.MethodDelete, APIPrefix+"/auth/users/:id", "deleteUser", "users",
			"Delete a user and their tokens (admin only)", http.StatusNoContent, s.handleDeleteUser).
			WithRefusals(http.StatusForbidden, http.StatusConflict),
	}
}

func (s *Server) handleListUsers(c echo.Context, _ *NoBody) ([]UserView, error) {
	us, err := s.deps.Auth.ListUsers(c.Request().Context(), caller(c))
	if err != nil {
		return nil, err
	}
	out := make([]UserView, 0, len(us))
	for _, u := range us {
		out = append(out, userView(u))
	}
	return out, nil
}

func (s *Server) handleCreateUser(c echo.Context, req *CreateUserRequest) (UserView, error) {
	u, err := s.deps.Auth.CreateUser(c.Request().Context(), caller(c), req.Username, req.Password, domain.Role(req.Role))
	if err != nil {
		return UserView{}, err
	}
	return userView(u), nil
}

func (s *Server) handleUpdateUser(c echo.Context, req *UpdateUserRequest) (NoBody, error) {
	if req.Role == nil && req.Password == nil && req.Disabled == nil {
		return NoBody{}, errs.E(errs.Validation, "nothing to change: send role, password or disabled")
	}
	patch := domain.UserPatch{Password: req.Password, Disabled: req.Disabled}
	if req.Role != nil {
		r := domain.Role(*req.Role)
		patch.Role = &r
	}
	return NoBody{}, s.deps.Auth.UpdateUser(c.Request().Context(), caller(c), c.Param("id"), patch)
}

func (s *Server) handleDeleteUser(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.Auth.DeleteUser(c.Request().Context(), caller(c), c.Param("id"))
}
