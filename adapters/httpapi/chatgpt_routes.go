package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// ChatGPTLoginView is a started ChatGPT sign-in.
type ChatGPTLoginView struct {
	AuthorizeURL string    `json:"authorize_url" doc:"Open it, sign in; the browser then lands on redirect_uri, where nothing listens: copy that address back to complete"`
	RedirectURI  string    `json:"redirect_uri" doc:"Where the browser lands after signing in (http://localhost:1455/auth/callback)"`
	ExpiresAt    time.Time `json:"expires_at" doc:"Complete before this; then sign in again"`
}

// ChatGPTCompleteRequest redeems a sign-in.
type ChatGPTCompleteRequest struct {
	CallbackURL string `json:"callback_url" required:"true" doc:"The whole address the browser landed on after signing in, with its code and state"`
}

// ChatGPTStatusView is a provider's sign-in, never its tokens.
type ChatGPTStatusView struct {
	LoggedIn  bool       `json:"logged_in"`
	Email     string     `json:"email,omitempty" doc:"The ChatGPT account's email, as its ID token names it"`
	Plan      string     `json:"plan,omitempty" doc:"The ChatGPT plan (plus, pro, team, …)"`
	AccountID string     `json:"account_id,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty" doc:"When the access token expires; it is refreshed before then"`
}

func (s *Server) chatgptRoutes() []Route {
	p := APIPrefix + "/providers/:id/chatgpt"
	return []Route{
		op(http.MethodPost, p+"/login", "startChatGPTLogin", "providers",
			"Start signing a chatgpt_login provider in: the authorize URL (its PKCE verifier kept by state for 10 minutes)",
			http.StatusOK, s.handleChatGPTLogin).WithOptionalBody().WithRefusals(http.StatusBadRequest, http.StatusForbidden, http.StatusServiceUnavailable),
		op(http.MethodPost, p+"/complete", "completeChatGPTLogin", "providers",
			"Redeem the pasted callback URL server-side; every agent on the provider then uses the sign-in",
			http.StatusOK, s.handleChatGPTComplete).WithRefusals(http.StatusBadRequest, http.StatusForbidden, http.StatusConflict, http.StatusBadGateway, http.StatusServiceUnavailable),
		op(http.MethodPost, p+"/logout", "chatGPTLogout", "providers",
			"Drop the provider's ChatGPT sign-in", http.StatusOK, s.handleChatGPTLogout).
			WithOptionalBody().WithRefusals(http.StatusBadRequest, http.StatusForbidden, http.StatusConflict, http.StatusServiceUnavailable),
		op(http.MethodGet, p+"/status", "getChatGPTStatus", "providers",
			"The provider's sign-in: account, plan and token expiry (the list's chatgpt_logged_in says whether)", http.StatusOK, s.handleChatGPTStatus),
	}
}

func (s *Server) handleChatGPTLogin(c echo.Context, _ *NoBody) (ChatGPTLoginView, error) {
	l, err := s.deps.Providers.ChatGPTLogin(c.Request().Context(), caller(c), c.Param("id"))
	return ChatGPTLoginView{AuthorizeURL: l.AuthorizeURL, RedirectURI: l.RedirectURI, ExpiresAt: l.ExpiresAt}, err
}

func (s *Server) handleChatGPTComplete(c echo.Context, req *ChatGPTCompleteRequest) (ProviderView, error) {
	p, err := s.deps.Providers.ChatGPTComplete(c.Request().Context(), caller(c), c.Param("id"), req.CallbackURL)
	return providerView(p), err
}

func (s *Server) handleChatGPTLogout(c echo.Context, _ *NoBody) (ProviderView, error) {
	p, err := s.deps.Providers.ChatGPTLogout(c.Request().Context(), caller(c), c.Param("id"))
	return providerView(p), err
}

func (s *Server) handleChatGPTStatus(c echo.Context, _ *NoBody) (ChatGPTStatusView, error) {
	st, err := s.deps.Providers.ChatGPTStatus(c.Request().Context(), caller(c), c.Param("id"))
	v := ChatGPTStatusView{LoggedIn: st.LoggedIn, Email: st.Email, Plan: st.Plan, AccountID: st.AccountID}
	if !st.ExpiresAt.IsZero() {
		v.ExpiresAt = &st.ExpiresAt
	}
	return v, err
}
