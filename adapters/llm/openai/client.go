// Package openai implements ports.LLM on the official openai-go SDK, for the
// Responses API and for Chat Completions (OpenAI itself and the many
// compatible servers). Requests and answers are translated between the
// internal Responses item shape and each protocol at this edge, and failures
// become *ports.ModelError.
package openai

import (
	"context"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agents-server/agents-server/adapters/llm/internal/transport"
	"github.com/agents-server/agents-server/ports"
)

// defaultBaseURL is OpenAI's endpoint, set explicitly so an OPENAI_BASE_URL
// in the server's environment cannot redirect a provider configured without
// a base URL.
const defaultBaseURL = "https://api.openai.com/v1/"

// Options configure a Client.
type Options struct {
	// HTTPClient replaces the client built per proxy setting (tests); nil
	// uses a shared transport per proxy URL.
	HTTPClient *http.Client
}

// Client is a ports.LLM for OpenAI's Responses and Chat Completions APIs.
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

// Models implements ports.LLM: the endpoint's GET /models.
func (c *Client) Models(ctx context.Context, ep ports.ProviderEndpoint) ([]ports.ModelInfo, error) {
	opts, err := c.options(ep)
	if err != nil {
		return nil, err
	}
	svc := openai.NewModelService(opts...)
	page, err := svc.List(ctx)
	if err != nil {
		return nil, classify(ctx, ep.Name, err)
	}
	out := make([]ports.ModelInfo, 0, len(page.Data))
	for _, m := range page.Data {
		out = append(out, ports.ModelInfo{ID: m.ID})
	}
	return out, nil
}

// options are the SDK options a call to ep takes.
func (c *Client) options(ep ports.ProviderEndpoint) ([]option.RequestOption, error) {
	httpClient, err := c.clients.ForEndpoint(ep)
	if err != nil {
		return nil, err
	}
	base := ep.BaseURL
	if base == "" {
		base = defaultBaseURL
	}
	// The services are built from these options alone: openai.NewClient
	// would first read the process environment (OPENAI_ORG_ID,
	// OPENAI_PROJECT_ID, OPENAI_CUSTOM_HEADERS, OPENAI_BASE_URL, …) and send
	// the operator's values to every provider, a third-party one included.
	// A provider's request carries only what its row says.
	return []option.RequestOption{
		option.WithBaseURL(base),
		option.WithAPIKey(ep.APIKey),
		// retrying is the runner's policy (it sees the classified error), not the SDK's
		option.WithMaxRetries(0),
		option.WithHTTPClient(httpClient),
	}, nil
}

// Generate streams one model call over the endpoint's API ("responses" or
// "chat_completions"), calling sink for each delta. Failures are
// *ports.ModelError (ModelInvalid for an unknown API or a bad proxy URL);
// a done ctx returns ctx.Err().
func (c *Client) Generate(ctx context.Context, req ports.ModelRequest, sink func(ports.ModelDelta)) (ports.ModelResponse, error) {
	if sink == nil {
		sink = func(ports.ModelDelta) {}
	}
	ep := req.Endpoint
	opts, err := c.options(ep)
	if err != nil {
		return ports.ModelResponse{}, err
	}
	switch ep.API {
	case "responses", "":
		svc := responses.NewResponseService(opts...)
		return generateResponses(ctx, &svc, ep.Name, responsesParams(req), sink)
	case "chat_completions":
		svc := openai.NewChatCompletionService(opts...)
		return generateChat(ctx, &svc, req, sink)
	default:
		return ports.ModelResponse{}, &ports.ModelError{Kind: ports.ModelInvalid, Provider: ep.Name,
			Message: "the openai adapter does not speak API " + ep.API}
	}
}
