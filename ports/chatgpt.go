package ports

import (
	"context"
	"errors"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// ChatGPTAuth is OpenAI's auth server as the ChatGPT (Codex) sign-in uses
// it: an OAuth authorization-code flow with PKCE for a public client whose
// redirect is fixed to ChatGPTRedirectURI.
type ChatGPTAuth interface {
	// AuthorizeURL is where the person signs in: it carries state and the
	// S256 challenge of verifier.
	AuthorizeURL(state, verifier string) string
	// Exchange redeems an authorization code. Errors are errs.Upstream with
	// the auth server's words.
	Exchange(ctx context.Context, code, verifier string) (domain.ChatGPTToken, error)
	// Refresh trades a refresh token for fresh tokens (the refresh token
	// rotates). ErrChatGPTRevoked (wrapped) when the auth server no longer
	// honours it; errs.Upstream for anything else.
	Refresh(ctx context.Context, refreshToken string) (domain.ChatGPTToken, error)
	// Revoke asks the auth server to revoke a refresh token (RFC 7009), as
	// the Codex CLI's logout does, so a sign-in forgotten here stops
	// working there too. Errors are errs.Upstream with the auth server's
	// words; a token it does not know is no error.
	Revoke(ctx context.Context, refreshToken string) error
}

// ChatGPTRedirectURI is the redirect every ChatGPT sign-in names: the
// Codex CLI's loopback address, the one the auth server accepts for its
// client. Nothing listens there; the person pastes the URL it lands on.
const ChatGPTRedirectURI = "http://localhost:1455/auth/callback"

// ErrChatGPTRevoked is a refresh the auth server refused for good (the
// token was revoked, reused or expired): only a new sign-in helps.
var ErrChatGPTRevoked = errors.New("the ChatGPT sign-in was revoked or has expired")

// ChatGPTStore keeps sign-ins: the waiting ones by state, and each
// provider's sealed tokens, written only by compare-and-swap so two
// refreshes (or a refresh and a sign-out) cannot overwrite each other.
type ChatGPTStore interface {
	// InsertChatGPTLogin stores a waiting sign-in and drops the expired ones.
	InsertChatGPTLogin(ctx context.Context, l domain.ChatGPTLogin, now time.Time) error
	// TakeChatGPTLogin removes and returns the sign-in waiting under state
	// that userID started for providerID; not_found when none is (expired
	// at now, used, or never issued); forbidden when it is another
	// person's or provider's, which stays waiting for its owner.
	TakeChatGPTLogin(ctx context.Context, state, providerID, userID string, now time.Time) (domain.ChatGPTLogin, error)
	// SwapChatGPTToken sets a chatgpt_login provider's sealed sign-in to
	// next when it is still old: false (and no error) when another writer
	// moved it first or the provider no longer signs in with ChatGPT;
	// not_found when the provider is gone.
	SwapChatGPTToken(ctx context.Context, providerID, old, next string) (bool, error)
}

// ChatGPTAccess is what a call to the Codex backend carries: a live access
// token and the account it acts for.
type ChatGPTAccess struct {
	AccessToken string
	AccountID   string
}

// ChatGPTCredentials gives the Codex bridge a provider's live access token
// at call time, refreshing it first when it is about to expire.
type ChatGPTCredentials interface {
	// ChatGPTAccess returns the sign-in of ep's provider (ep.ProviderID);
	// errs.Validation naming a missing or revoked sign-in, or the
	// refresh's failure.
	ChatGPTAccess(ctx context.Context, ep ProviderEndpoint) (ChatGPTAccess, error)
	// ChatGPTRefresh is ChatGPTAccess after the backend refused the access
	// token rejected (revoked before its expiry): a refreshed one, unless
	// another call already replaced it.
	ChatGPTRefresh(ctx context.Context, ep ProviderEndpoint, rejected string) (ChatGPTAccess, error)
}
