package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/errs"
)

func TestEnvelopeOf(t *testing.T) {
	cases := []struct {
		err    error
		status int
		code   errs.Code
		msg    string
	}{
		{errs.E(errs.NotFound, "agent not found"), 404, errs.NotFound, "agent not found"},
		{fmt.Errorf("wrapped: %w", errs.E(errs.Conflict, "busy")), 409, errs.Conflict, "busy"},
		{errs.Wrap(errs.Internal, errors.New("sql: secret detail"), "db"), 500, errs.Internal, "internal server error"},
		{errors.New("panic: secret detail"), 500, errs.Internal, "internal server error"},
		{errs.E(errs.RateLimited, "slow down"), 429, errs.RateLimited, "slow down"},
		{errs.E(errs.Upstream, "provider down"), 502, errs.Upstream, "provider down"},
		{errs.E(errs.Unavailable, "draining"), 503, errs.Unavailable, "draining"},
		{errs.E(errs.Forbidden, "admin role required"), 403, errs.Forbidden, "admin role required"},
		{errs.E(errs.Unauthorized, "no"), 401, errs.Unauthorized, "no"},
		{withStatus(413, errs.E(errs.Validation, "too big")), 413, errs.Validation, "too big"},
		{echo.ErrNotFound, 404, errs.NotFound, "no such route"},
		{echo.ErrMethodNotAllowed, 405, errs.Validation, "method not allowed on this route"},
	}
	for _, c := range cases {
		status, d := envelopeOf(c.err)
		if status != c.status || d.Code != string(c.code) || d.Message != c.msg {
			t.Errorf("%v → %d %+v, want %d %s %q", c.err, status, d, c.status, c.code, c.msg)
		}
	}
	for _, code := range errs.Codes {
		if StatusOf(code) == http.StatusInternalServerError && code != errs.Internal {
			t.Errorf("code %s has no status of its own", code)
		}
	}
}
