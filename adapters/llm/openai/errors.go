package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

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
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = http.StatusText(apiErr.StatusCode)
		}
		return &ports.ModelError{Kind: kindOf(apiErr.StatusCode, apiErr.Code, msg), Provider: provider,
			Status: apiErr.StatusCode, Message: msg, Err: err}
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		// an {"error":…} event mid-stream: the status was already 200
		var body struct {
			Error struct {
				Code    string `json:"code"`
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(streamErr.Event.Data, &body)
		// Chat Completions may send a refusal of the request with its type
		// and a null code: it is no passing failure, so it must not read
		// as one (an error with neither still does).
		code := body.Error.Code
		if code == "" && body.Error.Type == "invalid_request_error" {
			code = body.Error.Type
		}
		return streamFailure(provider, code, body.Error.Message, err)
	}
	return &ports.ModelError{Kind: ports.ModelUnavailable, Provider: provider, Message: "connection failed: " + err.Error(), Err: err}
}

// kindOf classifies an HTTP error answer.
func kindOf(status int, code, msg string) ports.ModelErrorKind {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ports.ModelAuth
	case status == http.StatusTooManyRequests && code == "insufficient_quota":
		// an exhausted quota is the account's state, not a passing limit:
		// retrying only delays the same answer
		return ports.ModelAuth
	case status == http.StatusTooManyRequests:
		return ports.ModelRateLimited
	case status == http.StatusRequestTimeout || status >= 500:
		return ports.ModelUnavailable
	case isOverflow(code, msg):
		return ports.ModelOverflow
	default:
		return ports.ModelInvalid
	}
}

// isOverflow recognises OpenAI's context-window refusal by its code, or by
// the wording compatible servers copy without the code.
func isOverflow(code, msg string) bool {
	m := strings.ToLower(msg)
	return code == "context_length_exceeded" || strings.Contains(m, "maximum context length") ||
		strings.Contains(m, "exceeds the context window")
}

// streamFailure classifies an error reported inside a 200 stream (an error
// event or response.failed), which carries a code but no status.
func streamFailure(provider, code, msg string, cause error) error {
	if msg == "" {
		msg = "the response failed"
		if code != "" {
			msg += ": " + code
		}
	}
	kind := ports.ModelInvalid
	switch {
	case isOverflow(code, msg):
		kind = ports.ModelOverflow
	case code == "rate_limit_exceeded":
		kind = ports.ModelRateLimited
	case code == "" || code == "server_error" || code == "vector_store_timeout":
		kind = ports.ModelUnavailable
	}
	return &ports.ModelError{Kind: kind, Provider: provider, Message: msg, Err: cause}
}

// truncated is the error for a stream that ended before its final event:
// the connection dropped, which is worth retrying.
func truncated(provider string) error {
	return &ports.ModelError{Kind: ports.ModelUnavailable, Provider: provider,
		Message: "the stream ended before the response completed"}
}
