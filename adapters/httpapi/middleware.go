package httpapi

import (
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// contentSecurityPolicy lets the UI load only from its own origin.
// Inline style ATTRIBUTES are allowed (the terminal colours its cells with
// them); inline <style> elements and every script stay refused.
const contentSecurityPolicy = "default-src 'self'; img-src 'self' data: blob:; connect-src 'self'; " +
	"style-src-attr 'unsafe-inline'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

// securityHeaders sets the headers every response carries. No CORS headers
// are ever sent: a browser on another origin cannot call the API.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		// Popups this origin opens (an MCP server's OAuth sign-in) keep
		// their opener, so the callback page can report back and close;
		// nothing another origin opens shares this one's context.
		h.Set("Cross-Origin-Opener-Policy", "same-origin-allow-popups")
		return next(c)
	}
}

// compress gzips responses to reads for clients that accept it: the UI's
// scripts and the JSON listings shrink several times over a team's network.
// A write's answer is one small object, and readying the compressor costs
// more than it saves. Event streams stay uncompressed, so every event
// leaves the moment it is written and no proxy holds it back for a fuller
// buffer; tar exports are left as they are.
var compress = middleware.GzipWithConfig(middleware.GzipConfig{
	MinLength: 1024,
	Skipper: func(c echo.Context) bool {
		p, m := c.Request().URL.Path, c.Request().Method
		return m != http.MethodGet && m != http.MethodHead ||
			strings.HasSuffix(p, "/events") || strings.HasSuffix(p, "/export") ||
			strings.Contains(c.Request().Header.Get(echo.HeaderAccept), "text/event-stream")
	},
})

// recoverPanics turns a handler panic into an internal error (logged with
// its stack by the error handler) instead of a dropped connection.
func recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				err = errs.E(errs.Internal, "panic: %v\n%s", r, debug.Stack())
			}
		}()
		return next(c)
	}
}

// logRequests writes one line per request, and an audit line per successful
// change naming the actor — never a body, never a credential.
func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		req, status := c.Request(), c.Response().Status
		actor := ""
		if p, ok := principalOf(c); ok {
			actor = p.User.Username
		}
		took := time.Since(start)
		s.log.Debug("request", "method", req.Method, "path", req.URL.Path, "status", status,
			"ms", took.Milliseconds(), "actor", actor)
		if s.cfg.Observe != nil {
			route := c.Path()
			if slices.Contains(InfraPaths, route) {
				route = "" // the UI, or a path no operation has
			}
			s.cfg.Observe(req.Method, route, status, took)
		}
		if req.Method != http.MethodGet && req.Method != http.MethodHead && status < 400 && strings.HasPrefix(req.URL.Path, APIPrefix) {
			s.log.Info("audit", "route", req.Method+" "+c.Path(), "path", req.URL.Path, "actor", actor, "status", status)
		}
		return nil
	}
}

// trackInFlight counts requests so a drain can wait for them, and refuses new
// work (anything but reads) once the drain has begun.
func (s *Server) trackInFlight(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		s.inflight.Add(1)
		defer s.inflight.Add(-1)
		if s.draining.Load() {
			m := c.Request().Method
			if (m != http.MethodGet && m != http.MethodHead) || c.Path() == "/health" {
				c.Response().Header().Set("Retry-After", "5")
				return errs.E(errs.Unavailable, "the server is shutting down; retry shortly")
			}
		}
		return next(c)
	}
}

// routeMiddleware applies a route's own rules in order: rate budget, body
// cap, then authentication (a public route's caller is a person not
// signed in, for the audit records made under it: a sign-in, a webhook
// delivery, which core names further).
func (s *Server) routeMiddleware(r Route) []echo.MiddlewareFunc {
	mw := []echo.MiddlewareFunc{func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := s.limits.take(c, r.Class()); err != nil {
				return err
			}
			return next(c)
		}
	}}
	if r.HasBody() {
		limit := func(echo.Context) int64 { return s.cfg.BodyLimit }
		switch {
		case r.BodyLimitFunc != nil:
			limit = r.BodyLimitFunc
		case r.BodyLimit > 0:
			limit = func(echo.Context) int64 { return r.BodyLimit }
		}
		mw = append(mw, limitBody(limit))
	}
	if r.Access == Bearer {
		mw = append(mw, s.authenticate)
	} else {
		mw = append(mw, func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error {
				setActor(c, domain.Actor{Kind: domain.ActorUser})
				return next(c)
			}
		})
	}
	if r.checksParams() {
		mw = append(mw, refuseNULParams(r))
	}
	return mw
}

// refuseNULParams refuses a path or query parameter holding a NUL
// character (sent as %00) with 400 naming it: parameters are stored or
// looked up, and no store takes a NUL alike (see domain.CheckNoNUL).
func refuseNULParams(r Route) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			for _, name := range r.PathParams() {
				if err := domain.CheckNoNUL(name, c.Param(name)); err != nil {
					return err
				}
			}
			q := c.QueryParams()
			for _, p := range r.Query {
				for _, v := range q[p.Name] {
					if err := domain.CheckNoNUL(p.Name, v); err != nil {
						return err
					}
				}
			}
			return next(c)
		}
	}
}

// limitBody refuses a declared oversize body with 413 without reading it,
// and cuts an undeclared (chunked) one at the cap so its decode fails.
func limitBody(limitOf func(echo.Context) int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			limit := limitOf(c)
			req := c.Request()
			if req.ContentLength > limit {
				return withStatus(http.StatusRequestEntityTooLarge,
					errs.E(errs.Validation, "request body of %d bytes exceeds the %s limit", req.ContentLength, humanBytes(limit)))
			}
			req.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
			return next(c)
		}
	}
}

const principalKey = "principal"

// authenticate resolves the bearer token; a failure spends the address's
// failed-authentication budget, and an empty budget refuses before the token
// is even looked at.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		token, present := bearerToken(c.Request())
		if present {
			if err := s.limits.checkAuthBudget(c); err != nil {
				return err
			}
		}
		p, err := s.deps.Auth.AuthenticateRequest(c.Request().Context(), token)
		if err != nil {
			if present && errs.Is(err, errs.Unauthorized) {
				s.SpendAuthFailure(c.Request())
			}
			return err
		}
		c.Set(principalKey, p)
		setActor(c, domain.UserActor(p.User, ""))
		return next(c)
	}
}

// setActor makes a the actor of the request's audit records, from the
// client's address (the direct peer's: forwarding headers are anyone's).
func setActor(c echo.Context, a domain.Actor) {
	r := c.Request()
	a.Address = clientIP(r)
	c.SetRequest(r.WithContext(ports.WithActor(r.Context(), a)))
}

// bearerToken reads "Authorization: Bearer <token>". Tokens are never read
// from the query string, where they would end up in logs and histories.
func bearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", true
	}
	return strings.TrimSpace(token), true
}

func principalOf(c echo.Context) (domain.Principal, bool) {
	p, ok := c.Get(principalKey).(domain.Principal)
	return p, ok
}

// caller returns the authenticated principal of a bearer route.
func caller(c echo.Context) domain.Principal {
	p, ok := principalOf(c)
	if !ok {
		// Only reachable if a route table entry is wired wrongly.
		panic(fmt.Sprintf("route %s %s reads a caller but is not a bearer route", c.Request().Method, c.Path()))
	}
	return p
}
