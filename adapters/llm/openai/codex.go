package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"unicode"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agents-server/agents-server/adapters/llm/internal/transport"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// DefaultCodexURL is the Codex backend ChatGPT plans are served from.
const DefaultCodexURL = "https://chatgpt.com/backend-api/codex"

// codexMark prefixes the encrypted_content of reasoning the Codex backend
// produced, as stored: the backend rejects a blob it did not make, and
// OpenAI's API rejects the backend's, so each side must know whose it is.
const codexMark = "codex:"

// codexClientVersion is the client version the models list is asked for.
const codexClientVersion = "0.63.0"

// codexFields are the only top-level request fields the backend takes:
// what the Codex CLI sends. It refuses any other with a 400 ("Unsupported
// parameter: …"), so the bridge sends these and leaves out the rest —
// max_output_tokens, temperature, top_p, a stored prompt — and with them
// any field the SDK or the shared translation adds later, until it is
// named here.
var codexFields = map[string]bool{
	"model": true, "instructions": true, "input": true, "tools": true, "tool_choice": true, "parallel_tool_calls": true,
	"reasoning": true, "store": true, "stream": true, "include": true, "prompt_cache_key": true, "text": true,
}

// codexInstructions are sent for an agent without instructions: the
// backend refuses a request without any ("Instructions are required").
const codexInstructions = "You are a helpful assistant."

// CodexOptions configure a Codex bridge.
type CodexOptions struct {
	// BaseURL is the backend ("" = DefaultCodexURL); requests go to
	// BaseURL/responses.
	BaseURL string
	// Credentials give each call its provider's live access token.
	Credentials ports.ChatGPTCredentials
	// HTTPClient replaces the client built per proxy setting (tests).
	HTTPClient *http.Client
}

// Codex is a ports.LLM for chatgpt_login providers: the Responses API as
// the Codex backend serves it to a ChatGPT account, on the official SDK.
// The backend differs from OpenAI's API in ways this bridge absorbs: the
// body is rewritten (store false, instructions always, only the fields the
// backend takes, input without item ids and with only the backend's own
// reasoning), errors come as {"detail": …}, and only streaming requests
// are accepted — which is all ports.LLM makes, so blocking callers (titles,
// compaction summaries, the playground) are served by a stream too.
type Codex struct {
	base    string
	creds   ports.ChatGPTCredentials
	clients *transport.Clients
}

var _ ports.LLM = (*Codex)(nil)

// NewCodex returns a Codex bridge.
func NewCodex(o CodexOptions) *Codex {
	base := strings.TrimRight(o.BaseURL, "/")
	if base == "" {
		base = DefaultCodexURL
	}
	return &Codex{base: base + "/", creds: o.Credentials, clients: &transport.Clients{Fixed: o.HTTPClient}}
}

// signedIn makes call with the SDK options of ep's sign-in: its live
// token, the account, and the headers the backend expects of Codex. A
// token the backend refuses before its expiry (revoked, or replaced by a
// sign-in elsewhere) is refreshed and the call made once more; a 401
// arrives before anything streamed, so nothing reached the sink twice.
func (c *Codex) signedIn(ctx context.Context, ep ports.ProviderEndpoint, call func([]option.RequestOption) error) error {
	acc, err := c.creds.ChatGPTAccess(ctx, ep)
	if err != nil {
		return c.credentialError(ctx, ep, err)
	}
	opts, err := c.options(ep, acc)
	if err != nil {
		return err
	}
	err = call(opts)
	var me *ports.ModelError
	if !errors.As(err, &me) || me.Status != http.StatusUnauthorized {
		return err
	}
	if acc, err = c.creds.ChatGPTRefresh(ctx, ep, acc.AccessToken); err != nil {
		return c.credentialError(ctx, ep, err)
	}
	if opts, err = c.options(ep, acc); err != nil {
		return err
	}
	return call(opts)
}

// credentialError is a sign-in that could not give a token: a missing or
// revoked one is the provider's configuration, anything else passing.
func (c *Codex) credentialError(ctx context.Context, ep ports.ProviderEndpoint, err error) error {
	if errs.Is(err, errs.Validation) {
		return &ports.ModelError{Kind: ports.ModelAuth, Provider: ep.Name, Message: errs.MessageOf(err), Err: err}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &ports.ModelError{Kind: ports.ModelUnavailable, Provider: ep.Name, Message: "the ChatGPT sign-in could not be refreshed: " + errs.MessageOf(err), Err: err}
}

func (c *Codex) options(ep ports.ProviderEndpoint, acc ports.ChatGPTAccess) ([]option.RequestOption, error) {
	if ep.BaseURL == "" {
		// The Codex backend is the server's own configuration (a flag),
		// wherever it is: no member aimed it.
		ep.Outbound = domain.OpenOutbound
	}
	httpClient, err := c.clients.ForEndpoint(ep)
	if err != nil {
		return nil, err
	}
	base := c.base
	if ep.BaseURL != "" {
		base = ep.BaseURL + "/" // a provider row never sets one; tests do
	}
	return []option.RequestOption{
		option.WithBaseURL(base),
		option.WithAPIKey(acc.AccessToken),
		option.WithHeader("chatgpt-account-id", acc.AccountID),
		option.WithHeader("OpenAI-Beta", "responses=experimental"),
		option.WithHeader("originator", "codex_cli_rs"),
		option.WithMaxRetries(0),
		option.WithHTTPClient(httpClient),
		option.WithMiddleware(detailErrors),
	}, nil
}

// Generate implements ports.LLM: one streamed call to the backend.
func (c *Codex) Generate(ctx context.Context, req ports.ModelRequest, sink func(ports.ModelDelta)) (ports.ModelResponse, error) {
	if sink == nil {
		sink = func(ports.ModelDelta) {}
	}
	params := codexParams(req)
	dropped, leaveOut := codexUnsupported(params)
	var resp ports.ModelResponse
	err := c.signedIn(ctx, req.Endpoint, func(opts []option.RequestOption) error {
		svc := responses.NewResponseService(append(opts, leaveOut...)...)
		var err error
		resp, err = generateResponses(ctx, &svc, req.Endpoint.Name, params, sink)
		return err
	})
	resp.Dropped = dropped
	if err != nil {
		return resp, err
	}
	for i, raw := range resp.Output {
		resp.Output[i] = markCodexReasoning(raw)
	}
	return resp, nil
}

// Models implements ports.LLM: the backend's model list.
func (c *Codex) Models(ctx context.Context, ep ports.ProviderEndpoint) ([]ports.ModelInfo, error) {
	var page struct {
		Models []struct {
			Slug        string `json:"slug"`
			DisplayName string `json:"display_name"`
		} `json:"models"`
	}
	err := c.signedIn(ctx, ep, func(opts []option.RequestOption) error {
		client := openai.Client{Options: opts}
		if err := client.Get(ctx, "models", nil, &page, option.WithQuery("client_version", codexClientVersion)); err != nil {
			return classify(ctx, ep.Name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]ports.ModelInfo, 0, len(page.Models))
	for _, m := range page.Models {
		out = append(out, ports.ModelInfo{ID: m.Slug, DisplayName: m.DisplayName})
	}
	return out, nil
}

// codexParams is the request rewritten for the backend: nothing stored,
// nothing referred to by id, instructions always, the conversation named
// for the backend's prompt cache, the reasoning's encrypted content asked
// for so the next turn can hand it back. Fields the backend does not take
// are still set here; codexUnsupported leaves them out of the body.
func codexParams(req ports.ModelRequest) responses.ResponseNewParams {
	p := responsesParams(req)
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: codexInput(req.Input)}
	p.Store = param.NewOpt(false)
	p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	if strings.TrimSpace(req.Instructions) == "" {
		p.Instructions = param.NewOpt(codexInstructions)
	}
	if req.ConversationID != "" {
		// The Codex CLI keys the cache by its conversation: every turn of
		// one shares its prefix, so the backend can reuse what it cached.
		p.PromptCacheKey = param.NewOpt(req.ConversationID)
	}
	return p
}

// codexUnsupported names the top-level fields of p the backend does not
// take (sorted) and the SDK options that delete them from the body. An
// allowlist rather than a list of known refusals: a field the SDK or the
// shared translation sets later is left out too instead of failing every
// call. The fields are read from p marshalled without its conversation and
// tools, which are always taken and are most of its size.
func codexUnsupported(p responses.ResponseNewParams) ([]string, []option.RequestOption) {
	p.Input, p.Tools = responses.ResponseNewParamsInputUnion{}, nil
	raw, err := json.Marshal(p)
	var fields map[string]json.RawMessage
	if err != nil || json.Unmarshal(raw, &fields) != nil {
		return nil, nil // the SDK fails the call on the same marshal
	}
	var dropped []string
	for k := range fields {
		if !codexFields[k] {
			dropped = append(dropped, k)
		}
	}
	slices.Sort(dropped)
	opts := make([]option.RequestOption, 0, len(dropped))
	for _, k := range dropped {
		opts = append(opts, option.WithJSONDel(sjsonKey(k)))
	}
	return dropped, opts
}

// sjsonKey is a field name as an sjson path of one step: every character
// but letters, digits, '_' and '-' escaped, so no name reads as a path.
func sjsonKey(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r != '_' && r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// codexInput translates the conversation to the fields the backend takes.
// No item carries an id (with store false the backend has none to look
// up, and refuses any); reasoning goes back only when the backend made it,
// as its encrypted content with the readable parts empty (the backend caps
// reasoning content at length 0); other item types have no place there.
func codexInput(raws []json.RawMessage) responses.ResponseInputParam {
	var out responses.ResponseInputParam
	for _, raw := range raws {
		it := domain.ParseItem(raw)
		switch it.Kind() {
		case domain.ItemMessage:
			it.ID = "" // an assistant message goes as plain text
			m := messageParam(it)
			if m.OfMessage != nil {
				m.OfMessage.Type = responses.EasyInputMessageTypeMessage // as the Codex CLI sends it
			}
			out = append(out, m)
		case domain.ItemFunctionCall:
			out = append(out, callParam(it, false))
		case domain.ItemFunctionCallOutput:
			out = append(out, callOutputParam(it))
		case domain.ItemReasoning:
			if !codexNative(it) {
				continue
			}
			summary := []map[string]string{}
			for _, s := range it.Summary {
				summary = append(summary, map[string]string{"type": "summary_text", "text": s.Text})
			}
			// The SDK's reasoning param requires an id; the override sends
			// the item without one.
			out = append(out, param.Override[responses.ResponseInputItemUnionParam](map[string]any{
				"type": domain.ItemReasoning, "summary": summary, "encrypted_content": strings.TrimPrefix(it.EncryptedContent, codexMark)}))
		}
	}
	return out
}

// codexNative reports whether a reasoning item's encrypted content came
// from the Codex backend.
func codexNative(it domain.Item) bool {
	return strings.HasPrefix(it.EncryptedContent, codexMark)
}

// markCodexReasoning marks the encrypted content of a reasoning item the
// backend returned as its own; other items pass unchanged.
func markCodexReasoning(raw json.RawMessage) json.RawMessage {
	it := domain.ParseItem(raw)
	if it.Kind() != domain.ItemReasoning || it.EncryptedContent == "" || codexNative(it) {
		return raw
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	m["encrypted_content"] = codexMark + it.EncryptedContent
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}

// detailErrors rewrites the backend's error bodies ({"detail": "…"}, or
// plain text) into OpenAI's {"error": {…}} so the SDK reads the backend's
// words instead of failing to parse them.
func detailErrors(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res.StatusCode < 400 {
		return res, err
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	_ = res.Body.Close()
	if err != nil {
		return nil, err
	}
	var shape struct {
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &shape) != nil || len(shape.Error) == 0 {
		msg := strings.TrimSpace(string(body))
		if len(shape.Detail) > 0 {
			var s string
			if json.Unmarshal(shape.Detail, &s) != nil {
				s = string(shape.Detail)
			}
			msg = s
		}
		body, _ = json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
		res.Header.Set("Content-Type", "application/json")
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	res.ContentLength = int64(len(body))
	res.Header.Del("Content-Length")
	return res, nil
}
