package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// UserView is a user as the API shows it (never a password hash).
type UserView struct {
	ID          string    `json:"id"`
	Username    string    `json:"username"`
	Role        string    `json:"role" enum:"role"`
	Disabled    bool      `json:"disabled"`
	Bootstrap   bool      `json:"bootstrap" doc:"The admin created on first start; it cannot be disabled, demoted or deleted"`
	HasPassword bool      `json:"has_password"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func userView(u domain.User) UserView {
	return UserView{ID: u.ID, Username: u.Username, Role: string(u.Role), Disabled: u.Disabled, Bootstrap: u.Bootstrap,
		HasPassword: u.HasPassword(), CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
}

// LoginRequest signs in with a password.
type LoginRequest struct {
	Username string `json:"username" required:"true"`
	Password string `json:"password" required:"true"`
}

// LoginResponse carries the new session token (30 days sliding, 90 at most).
type LoginResponse struct {
	Token string   `json:"token"`
	User  UserView `json:"user"`
}

// TokenView is one of the caller's tokens; the token text is never listed.
type TokenView struct {
	ID         string     `json:"id"`
	Kind       string     `json:"kind" enum:"token_kind"`
	Name       string     `json:"name"`
	Hint       string     `json:"hint" doc:"The token's first characters, to tell tokens apart"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt time.Time  `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty" doc:"Absent: never expires"`
	Current    bool       `json:"current" doc:"The token this request authenticated with"`
}

func tokenView(t domain.Token, current string) TokenView {
	return TokenView{ID: t.ID, Kind: string(t.Kind), Name: t.Name, Hint: t.Hint, CreatedAt: t.CreatedAt,
		LastUsedAt: t.LastUsedAt, ExpiresAt: t.ExpiresAt, Current: t.ID == current}
}

// CreateTokenRequest asks for a personal access token.
type CreateTokenRequest struct {
	Name          string `json:"name" required:"true"`
	ExpiresInDays int    `json:"expires_in_days,omitempty" doc:"Lifetime in days; 0 never expires"`
}

// CreatedToken is a new personal access token: the only time its text is shown.
type CreatedToken struct {
	TokenView
	Token string `json:"token" doc:"The token itself, shown once"`
}

func (s *Server) authRoutes() []Route {
	return []Route{
		op(http.MethodPost, APIPrefix+"/auth/login", "login", "auth",
			"Sign in with username and password; returns a session token (403 when password sign-in is turned off)",
			http.StatusOK, s.handleLogin).PublicRoute().WithRefusals(http.StatusUnauthorized, http.StatusForbidden),
		op(http.MethodPost, APIPrefix+"/auth/logout", "logout", "auth",
			"Revoke the token this request authenticated with", http.StatusNoContent, s.handleLogout),
		op(http.MethodGet, APIPrefix+"/auth/me", "getMe", "auth",
			"The signed-in user", http.StatusOK, s.handleMe),
		op(http.MethodGet, APIPrefix+"/auth/tokens", "listTokens", "auth",
			"The caller's tokens, newest first", http.StatusOK, s.handleListTokens),
		op(http.MethodPost, APIPrefix+"/auth/tokens", "createToken", "auth",
			"Create a personal access token (its text is shown once)", http.StatusCreated, s.handleCreateToken),
		op(http.MethodDelete, APIPrefix+"/auth/tokens/:id", "deleteToken", "auth",
			"Revoke one of the caller's tokens", http.StatusNoContent, s.handleDeleteToken),
	}
}

// handleLogin spends the failed-authentication budget on a wrong password,
// and checks that budget before looking at the credentials at all.
func (s *Server) handleLogin(c echo.Context, req *LoginRequest) (LoginResponse, error) {
	if err := s.limits.checkAuthBudget(c); err != nil {
		return LoginResponse{}, err
	}
	token, u, err := s.deps.Auth.Login(c.Request().Context(), req.Username, req.Password)
	if err != nil {
		if errs.Is(err, errs.Unauthorized) {
			s.SpendAuthFailure(c.Request())
		}
		return LoginResponse{}, err
	}
	return LoginResponse{Token: token, User: userView(u)}, nil
}

func (s *Server) handleLogout(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.Auth.Logout(c.Request().Context(), caller(c))
}

func (s *Server) handleMe(c echo.Context, _ *NoBody) (UserView, error) {
	return userView(caller(c).User), nil
}

func (s *Server) handleListTokens(c echo.Context, _ *NoBody) ([]TokenView, error) {
	p := caller(c)
	ts, err := s.deps.Auth.ListTokens(c.Request().Context(), p)
	if err != nil {
		return nil, err
	}
	out := make([]TokenView, 0, len(ts))
	for _, t := range ts {
		out = append(out, tokenView(t, p.TokenID))
	}
	return out, nil
}

func (s *Server) handleCreateToken(c echo.Context, req *CreateTokenRequest) (CreatedToken, error) {
	p := caller(c)
	text, t, err := s.deps.Auth.CreatePersonalToken(c.Request().Context(), p, req.Name, req.ExpiresInDays)
	if err != nil {
		return CreatedToken{}, err
	}
	return CreatedToken{TokenView: tokenView(t, p.TokenID), Token: text}, nil
}

func (s *Server) handleDeleteToken(c echo.Context, _ *NoBody) (NoBody, error) {
	return NoBody{}, s.deps.Auth.RevokeToken(c.Request().Context(), caller(c), c.Param("id"))
}
