package e2b

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"connectrpc.com/connect"

	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/api"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// config is a sandbox row's e2b config with its defaults applied and its
// secrets open.
type config struct {
	sandboxID     string // the row
	apiURL        string
	domain        string
	apiKey        string
	dataPlaneAuth string
	template      string
	timeout       int32 // the lease, in seconds
	autoPause     bool
	allowInternet bool
	headers       map[string]string
}

// configOf reads a target's config. Returns validation for a target of
// another type.
func configOf(t ports.SandboxTarget) (config, error) {
	e, ok := t.Config.(*domain.E2BConfig)
	if !ok || e == nil {
		return config{}, errs.E(errs.Validation, "sandbox %s is not an e2b sandbox", t.SandboxID)
	}
	c := config{sandboxID: t.SandboxID, apiURL: strings.TrimRight(e.APIURL, "/"), domain: e.Domain, apiKey: e.APIKey,
		dataPlaneAuth: e.DataPlaneAuth, template: e.TemplateID, timeout: int32(e.TimeoutSeconds),
		autoPause: e.AutoPause == nil || *e.AutoPause, allowInternet: e.AllowInternet, headers: map[string]string{}}
	if c.domain == "" {
		c.domain = defaultDomain
	}
	if c.apiURL == "" {
		c.apiURL = "https://api." + c.domain
	}
	if c.timeout <= 0 {
		c.timeout = domain.DefaultE2BTimeoutSeconds
	}
	for name, v := range e.Headers {
		if v != nil {
			c.headers[name] = *v
		}
	}
	return c, nil
}

// host is the control plane's host, for messages.
func (c config) host() string {
	if u, err := url.Parse(c.apiURL); err == nil && u.Host != "" {
		return u.Host
	}
	return c.apiURL
}

// scrub removes the config's secrets from text bound for a client.
func (c config) scrub(s string) string {
	for _, secret := range append([]string{c.apiKey}, values(c.headers)...) {
		if len(secret) >= 4 {
			s = strings.ReplaceAll(s, secret, "********")
		}
	}
	return s
}

func values(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// control is a client of the service's control plane: the API key and the
// configured headers ride every request.
func (r *Runtime) control(c config) (*api.ClientWithResponses, error) {
	cl, err := api.NewClientWithResponses(c.apiURL, api.WithHTTPClient(r.o.HTTP),
		api.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			for name, v := range c.headers {
				req.Header.Set(name, v)
			}
			if c.apiKey != "" {
				req.Header.Set("X-API-Key", c.apiKey)
			}
			return nil
		}))
	if err != nil {
		return nil, errs.Wrap(errs.Validation, err, "the e2b api_url %q is not usable", c.apiURL)
	}
	return cl, nil
}

// serviceError is an answer of the service that refused a call (as opposed
// to a failure to reach it): Test reports it as "ran but failed".
type serviceError struct {
	Status  int
	Message string
}

func (e *serviceError) Error() string { return fmt.Sprintf("%d %s", e.Status, e.Message) }

// answered translates a control-plane answer that is not the success
// expected: 404 is not_found, anything else upstream with the service's
// own message (minus secrets).
func (c config) answered(res *http.Response, body []byte, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	msg := strings.TrimSpace(string(body))
	var e api.Error
	if json := strings.TrimSpace(msg); strings.HasPrefix(json, "{") {
		if err := decodeJSON(body, &e); err == nil && e.Message != "" {
			msg = e.Message
		}
	}
	if len(msg) > 500 {
		msg = msg[:500] + "…"
	}
	msg = c.scrub(msg)
	se := &serviceError{Status: res.StatusCode, Message: msg}
	switch {
	case res.StatusCode == http.StatusNotFound:
		return errs.Wrap(errs.NotFound, se, "%s: the e2b service at %s answered 404: %s", what, c.host(), msg)
	case res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden:
		return errs.Wrap(errs.Upstream, se, "%s: the e2b service at %s refused the API key (%d): %s", what, c.host(), res.StatusCode, msg)
	default:
		return errs.Wrap(errs.Upstream, se, "%s: the e2b service at %s answered %d: %s", what, c.host(), res.StatusCode, msg)
	}
}

// unreachable translates a failure to talk to the service; a caller's
// cancellation is returned as is.
func (c config) unreachable(err error, format string, args ...any) error {
	var coded *errs.Error
	if errors.As(err, &coded) || errors.Is(err, context.Canceled) {
		return err
	}
	what := fmt.Sprintf(format, args...)
	if errors.Is(err, context.DeadlineExceeded) {
		return errs.Wrap(errs.Upstream, err, "%s: the e2b service at %s did not answer in time", what, c.host())
	}
	return errs.Wrap(errs.Upstream, err, "%s: cannot reach the e2b service at %s: %s", what, c.host(), c.scrub(err.Error()))
}

// daemonFail translates an error of the in-sandbox daemon's services.
func (c config) daemonFail(ctx context.Context, err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var coded *errs.Error
	if errors.As(err, &coded) {
		return err
	}
	what := fmt.Sprintf(format, args...)
	msg := c.scrub(err.Error())
	switch connect.CodeOf(err) {
	case connect.CodeNotFound:
		return errs.Wrap(errs.NotFound, err, "%s: %s", what, msg)
	case connect.CodeInvalidArgument:
		return errs.Wrap(errs.Validation, err, "%s: %s", what, msg)
	case connect.CodeUnauthenticated, connect.CodePermissionDenied:
		return errs.Wrap(errs.Upstream, err, "%s: the sandbox's daemon refused its credentials: %s", what, msg)
	}
	return errs.Wrap(errs.Upstream, err, "%s: the sandbox's daemon: %s", what, msg)
}

// dataPlaneHeaders are what every call to a sandbox's daemon carries: the
// credential data_plane_auth names (auto: the per-sandbox token when the
// service issued one, else the API key), the sandbox's identity for
// services that route by header, the user commands run as, and the
// configured headers.
func (c config) dataPlaneHeaders(sandboxID, token string) http.Header {
	h := http.Header{}
	for name, v := range c.headers {
		h.Set(name, v)
	}
	mode := c.dataPlaneAuth
	if mode == "" {
		mode = "access_token"
		if token == "" {
			mode = "api_key"
		}
	}
	switch mode {
	case "access_token":
		h.Set("X-Access-Token", token)
	case "api_key":
		if c.apiKey != "" {
			h.Set("X-API-Key", c.apiKey)
		}
	}
	h.Set("E2b-Sandbox-Id", sandboxID)
	h.Set("E2b-Sandbox-Port", fmt.Sprint(envdPort))
	// The daemon picks the user an operation runs as from a basic
	// credential with an empty password.
	h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(runAs+":")))
	return h
}

// withHeaders is a transport adding fixed headers to every request.
type withHeaders struct {
	base http.RoundTripper
	h    http.Header
}

func (t withHeaders) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for name, vs := range t.h {
		req.Header[name] = vs
	}
	return t.base.RoundTrip(req)
}
