package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/agents-server/agents-server/adapters/llm/internal/transport"
	"github.com/agents-server/agents-server/ports"
)

// classify turns a failed call into a *ports.ModelError at the edge. A done
// ctx wins over whatever the transport reported, so a cancelled run ends as
// context.Canceled rather than as a provider failure.
func classify(ctx context.Context, provider string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if refused := transport.Refused(provider, err); refused != nil {
		return refused
	}
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		return &ports.ModelError{Kind: ports.ModelUnavailable, Provider: provider, Message: "connection failed: " + err.Error(), Err: err}
	}
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(apiErr.RawJSON()), &body) // a body that is not the error shape leaves the status to speak
	typ, msg := body.Error.Type, body.Error.Message
	status := apiErr.StatusCode
	if status == http.StatusOK {
		// an error event inside a stream that began well: only its type says
		// what happened
		status = 0
	}
	if msg == "" {
		msg = http.StatusText(status)
		if msg == "" {
			msg = typ
		}
	}
	return &ports.ModelError{Kind: kindOf(status, typ, msg), Provider: provider, Status: status, Message: msg, Err: err}
}

// kindOf classifies by HTTP status, or by Anthropic's error type when the
// error arrived mid-stream without one.
func kindOf(status int, typ, msg string) ports.ModelErrorKind {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden,
		typ == "authentication_error" || typ == "permission_error":
		return ports.ModelAuth
	case status == http.StatusTooManyRequests || typ == "rate_limit_error":
		return ports.ModelRateLimited
	case status == http.StatusRequestTimeout || status >= 500, typ == "overloaded_error" || typ == "api_error":
		return ports.ModelUnavailable
	case status == http.StatusRequestEntityTooLarge || typ == "request_too_large" || isOverflow(msg):
		return ports.ModelOverflow
	case status == 0 && typ != "invalid_request_error" && typ != "not_found_error":
		return ports.ModelUnavailable
	default:
		return ports.ModelInvalid
	}
}

// isOverflow recognises Anthropic's context-window refusals: "prompt is too
// long: N tokens > M maximum", and input plus max_tokens over the limit.
func isOverflow(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "prompt is too long") || strings.Contains(m, "exceed context limit")
}
