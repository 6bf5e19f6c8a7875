package domain

import "time"

// Provider is one configured model endpoint and the credential that reaches
// it. It is the only place a model-API key is stored; agents reference it.
type Provider struct {
	ID string
	Ownership
	Name     string
	Type     string // a registry type: openai, anthropic
	AuthMode string // api_key, chatgpt_login
	API      string // the wire protocol: responses, chat_completions, messages
	BaseURL  string // "" = the type's official endpoint
	// SealedAPIKey is the key as stored: sealed when a secret key is set.
	// Only the providers service opens it.
	SealedAPIKey string
	// SealedChatGPTToken is a chatgpt_login provider's sign-in (a
	// ChatGPTToken as JSON), sealed; "" when not signed in.
	SealedChatGPTToken string
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// ChatGPTLoggedIn reports whether a chatgpt_login provider holds a sign-in.
func (p Provider) ChatGPTLoggedIn() bool {
	return p.AuthMode == AuthChatGPTLogin && p.SealedChatGPTToken != ""
}

// The provider auth modes.
const (
	AuthAPIKey       = "api_key"
	AuthChatGPTLogin = "chatgpt_login"
)
