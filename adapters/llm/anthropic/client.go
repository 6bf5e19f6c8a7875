// Package anthropic implements ports.LLM on the official anthropic-sdk-go,
// for the Messages API. Requests and answers are translated between the
// internal Responses item shape and Messages content blocks at this edge,
// and failures become *ports.ModelError.
package anthropic

import (
	"context"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/agents-server/agents-server/adapters/llm/internal/transport"
	"github.com/agents-server/agents-server/ports"
)

// defaultBaseURL is Anthropic's endpoint; the SDK appends v1/messages.
const defaultBaseURL = "https://api.anthropic.com/"

// Options configure a Client.
type Options struct {
	// HTTPClient replaces the client built per proxy setting (tests); nil
	// uses a shared transport per proxy URL.
	HTTPClient *http.Client
}

// Client is a ports.LLM for Anthropic's Messages API.
// It is safe for concurrent use.
type Client struct {
	// clients keeps one HTTP client per proxy URL so connections are reused
	// across calls.
	clients *transport.Clients
}

// New returns a Client.
func New(opts Options) *Client {
	return &Client{clients: &transport.Clients{Fixed: opts.HTTPClient}}
}

var _ ports.LLM = (*Client)(nil)

// Generate streams one Messages call, calling sink for each delta. Failures
// are *ports.ModelError (ModelInvalid for a bad proxy URL); a done ctx
// returns ctx.Err().
func (c *Client) Generate(ctx context.Context, req ports.ModelRequest, sink func(ports.ModelDelta)) (ports.ModelResponse, error) {
	if sink == nil {
		sink = func(ports.ModelDelta) {}
	}
	sdk, err := c.sdk(req.Endpoint)
	if err != nil {
		return ports.ModelResponse{}, err
	}
	return generate(ctx, &sdk, req, sink)
}

// Models implements ports.LLM: the endpoint's GET /v1/models.
func (c *Client) Models(ctx context.Context, ep ports.ProviderEndpoint) ([]ports.ModelInfo, error) {
	sdk, err := c.sdk(ep)
	if err != nil {
		return nil, err
	}
	page, err := sdk.Models.List(ctx, anthropic.ModelListParams{Limit: anthropic.Int(1000)})
	if err != nil {
		return nil, classify(ctx, ep.Name, err)
	}
	out := make([]ports.ModelInfo, 0, len(page.Data))
	for _, m := range page.Data {
		out = append(out, ports.ModelInfo{ID: m.ID, DisplayName: m.DisplayName})
	}
	return out, nil
}

// sdk is the SDK client for a call to ep.
func (c *Client) sdk(ep ports.ProviderEndpoint) (anthropic.Client, error) {
	httpClient, err := c.clients.ForEndpoint(ep)
	if err != nil {
		return anthropic.Client{}, err
	}
	base := ep.BaseURL
	if base == "" {
		base = defaultBaseURL
	}
	return anthropic.NewClient(
		// the endpoint is the whole configuration: no ANTHROPIC_* variable
		// or profile file of the server's environment may add to it
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(base),
		option.WithAPIKey(ep.APIKey),
		// retrying is the runner's policy (it sees the classified error), not the SDK's
		option.WithMaxRetries(0),
		option.WithHTTPClient(httpClient),
	), nil
}
