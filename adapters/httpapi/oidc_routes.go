package httpapi

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/domain"
)

// SignInMethodsView tells the sign-in page which ways in there are.
type SignInMethodsView struct {
	Password bool   `json:"password" doc:"The username and password form works (false: --password-login=false)"`
	OIDC     bool   `json:"oidc" doc:"Single sign-on with an OpenID Provider is configured"`
	OIDCName string `json:"oidc_name,omitempty" doc:"The provider's name, for the button: Sign in with <name>"`
}

// oidcCallbackPath is where the provider sends the browser back, under
// the API prefix.
const oidcCallbackPath = APIPrefix + "/auth/oidc/callback"

// oidcBindingCookie binds a single sign-on to the browser that started
// it: the callback completes only where it comes back with it.
const oidcBindingCookie = "agents_oidc_binding"

func (s *Server) oidcRoutes() []Route {
	return []Route{
		op(http.MethodGet, APIPrefix+"/auth/methods", "getSignInMethods", "auth",
			"The ways to sign in this server offers (for the sign-in page)", http.StatusOK, s.handleSignInMethods).PublicRoute(),
		redirect(APIPrefix+"/auth/oidc/start", "startOIDCSignIn", "auth",
			"Begin single sign-on: redirects the browser to the identity provider (and hands it the cookie the callback checks)",
			s.handleOIDCStart).
			WithQuery(QueryParam{Name: "return_to", Type: "string", Description: "The workbench path to land on after signing in (default /)"}).
			WithRefusals(http.StatusNotFound, http.StatusBadGateway),
		redirect(oidcCallbackPath, "oidcSignInCallback", "auth",
			"Where the identity provider sends the browser back: signs in and redirects to the workbench with the session "+
				"token in the address's fragment (#token=…), or to the sign-in page with the reason it was refused (#signin_error=…)",
			s.handleOIDCCallback).
			WithQuery(QueryParam{Name: "code", Type: "string", Description: "The authorization code"},
				QueryParam{Name: "state", Type: "string", Description: "The sign-in's state"},
				QueryParam{Name: "iss", Type: "string", Description: "The issuer (RFC 9207)"},
				QueryParam{Name: "error", Type: "string", Description: "The provider's refusal"},
				QueryParam{Name: "error_description", Type: "string", Description: "Its explanation"}),
	}
}

// redirect builds a public GET route that answers 302 Found to where its
// handler sends the browser.
func redirect(path, id, tag, summary string, h echo.HandlerFunc) Route {
	return Route{
		Method: http.MethodGet, Path: path, OperationID: id, Tag: tag, Summary: summary, Status: http.StatusFound,
		Access: Public, Request: noBodyType, Response: noBodyType, handler: func(Route) echo.HandlerFunc { return h },
	}
}

func (s *Server) handleSignInMethods(_ echo.Context, _ *NoBody) (SignInMethodsView, error) {
	o := s.deps.Auth.SignInOptions()
	return SignInMethodsView{Password: o.Password, OIDC: o.OIDC, OIDCName: o.OIDCName}, nil
}

func (s *Server) handleOIDCStart(c echo.Context) error {
	callback := s.externalOrigin(c) + oidcCallbackPath
	start, err := s.deps.Auth.StartOIDC(c.Request().Context(), callback, c.QueryParam("return_to"))
	if err != nil {
		return err
	}
	// HttpOnly, sent only to the callback, on same-site requests and
	// top-level navigations (Lax: the provider's redirect back is one),
	// over TLS only when the callback is https.
	c.SetCookie(&http.Cookie{Name: oidcBindingCookie, Value: start.Binding,
		Path: MountOf(c.Request().Context()).Prefix + oidcCallbackPath, MaxAge: int(domain.OIDCAttemptTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: strings.HasPrefix(callback, "https://")})
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Redirect(http.StatusFound, start.AuthorizeURL)
}

func (s *Server) handleOIDCCallback(c echo.Context) error {
	q := c.QueryParams()
	cb := auth.OIDCCallback{State: q.Get("state"), Code: q.Get("code"), Error: q.Get("error_description")}
	if cb.Error == "" {
		cb.Error = q.Get("error")
	}
	if ck, err := c.Cookie(oidcBindingCookie); err == nil {
		cb.Binding = ck.Value
	}
	prefix := MountOf(c.Request().Context()).Prefix
	// The binding is spent, whatever happens next.
	c.SetCookie(&http.Cookie{Name: oidcBindingCookie, Value: "", Path: prefix + oidcCallbackPath, MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteLaxMode})
	c.Response().Header().Set("Cache-Control", "no-store")
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	in, err := s.deps.Auth.FinishOIDC(c.Request().Context(), cb)
	if err != nil {
		reason := auth.OIDCRefusalOf(err)
		if reason == "" {
			reason = domain.RefusedProvider // the store or the server failed: try again
		}
		return c.Redirect(http.StatusFound, prefix+"/#signin_error="+url.QueryEscape(string(reason)))
	}
	return c.Redirect(http.StatusFound, prefix+in.ReturnTo+"#token="+url.QueryEscape(in.Token))
}
