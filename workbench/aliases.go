package workbench

import (
	"errors"

	"github.com/agents-server/agents-server/adapters/chatgpt"
	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/openai"
	"github.com/agents-server/agents-server/adapters/mcpserver"
	"github.com/agents-server/agents-server/core/attachments"
	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/ports"
)

// The types Options and the services speak, named here so a program needs
// only this package for the common cases.
type (
	// HTTPConfig tunes the API's platform rules (Options.HTTP).
	HTTPConfig = httpapi.Config
	// RateLimits are the API's request budgets per client address.
	RateLimits = httpapi.RateLimits
	// Budget is one rate budget: a steady rate and a burst.
	Budget = httpapi.Budget
	// HubOptions tunes the live event streams (Options.Hub).
	HubOptions = hub.Options
	// ImageOptions bounds the decoding of uploaded images (Options.Images).
	ImageOptions = attachments.Options
	// PasswordParams is the password hashing cost (Options.PasswordParams).
	PasswordParams = auth.PasswordParams
	// Clock tells the time (Options.Clock).
	Clock = ports.Clock
	// IDs mints row ids (Options.IDs).
	IDs = ports.IDs
	// LLM is the model port a Model implements.
	LLM = ports.LLM
	// Principal is whom a service call acts for.
	Principal = domain.Principal
)

// Defaults the agents-server command shows in its flags' help.
const (
	// DefaultChatGPTAuthURL is where a ChatGPT sign-in goes by default.
	DefaultChatGPTAuthURL = chatgpt.DefaultIssuer
	// DefaultChatGPTBackendURL is the Codex backend chatgpt_login
	// providers call by default.
	DefaultChatGPTBackendURL = openai.DefaultCodexURL
	// DefaultBodyLimit is the API's default request body cap.
	DefaultBodyLimit = httpapi.DefaultBodyLimit
	// DefaultMCPSessionIdle is Options.MCPSessionIdle's default.
	DefaultMCPSessionIdle = mcpserver.DefaultSessionIdle
)

// Describe renders an error of Open (or of a service) for a person: its
// message and, for an operator reading their own terminal, its cause.
func Describe(err error) string {
	if err == nil {
		return ""
	}
	var e *errs.Error
	if errors.As(err, &e) {
		if e.Err != nil {
			return e.Message + ": " + e.Err.Error()
		}
		return e.Message
	}
	return err.Error()
}
