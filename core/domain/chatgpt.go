package domain

import "time"

// ChatGPTToken is a chatgpt_login provider's sign-in: the tokens OpenAI's
// auth server issued for a ChatGPT account. It is stored sealed on the
// provider and only the providers service opens it.
type ChatGPTToken struct {
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token"`
	IDToken      string    `json:"id_token,omitempty"`
	AccountID    string    `json:"account_id"` // sent as chatgpt-account-id
	Email        string    `json:"email,omitempty"`
	Plan         string    `json:"plan,omitempty"`      // the ChatGPT plan, as the ID token names it
	ExpiresAt    time.Time `json:"expires_at,omitzero"` // zero: unknown
	RefreshedAt  time.Time `json:"refreshed_at,omitzero"`
}

// ChatGPTLogin is one sign-in waiting for its callback: the PKCE verifier
// kept by the state the authorize URL carries.
type ChatGPTLogin struct {
	State      string
	ProviderID string
	UserID     string // who started it; only they may complete it
	// SealedVerifier is the PKCE code verifier, sealed like a credential.
	SealedVerifier string
	ExpiresAt      time.Time
}
