// Package mcp is the MCP client adapter: ports.MCPDialer over the official
// Go SDK's streamable HTTP transport, with its OAuth authorization-code
// handler (PKCE, metadata discovery, dynamic registration, RFC 9207)
// signing in through core's callbacks.
package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-server/agents-server/ports"
)

// Dialer is a ports.MCPDialer. The zero value is ready.
type Dialer struct {
	// HTTP is the client requests go through; nil uses a shared one.
	HTTP *http.Client
	// Version is the workbench's version, sent in the handshake.
	Version string
}

var _ ports.MCPDialer = (*Dialer)(nil)

var sharedTransport = &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 8, IdleConnTimeout: 90 * time.Second,
	ResponseHeaderTimeout: 0, ForceAttemptHTTP2: true}

// Dial implements ports.MCPDialer.
func (d *Dialer) Dial(ctx context.Context, target ports.MCPTarget) (ports.MCPSession, error) {
	base := d.HTTP
	if base == nil {
		base = &http.Client{Transport: sharedTransport}
	}
	client := &http.Client{Transport: headerTransport{base: base.Transport, headers: target.Headers}, Jar: base.Jar}
	transport := &sdk.StreamableClientTransport{Endpoint: target.Endpoint, HTTPClient: client}
	if target.OAuth != nil {
		h, err := oauthHandler(target, base)
		if err != nil {
			return nil, err
		}
		transport.OAuthHandler = h
	}
	version := d.Version
	if version == "" {
		version = "dev"
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "agents-server", Version: version}, nil)
	cs, err := c.Connect(ctx, transport, nil)
	if err != nil {
		return nil, classify(err, "could not connect to "+target.Name)
	}
	s := &session{cs: cs, done: make(chan struct{})}
	go func() {
		err := cs.Wait()
		s.mu.Lock()
		if !s.closed {
			s.err = err
		}
		s.mu.Unlock()
		close(s.done)
	}()
	return s, nil
}

// headerTransport adds the server's configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	if len(t.headers) == 0 {
		return base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		// The OAuth handler's bearer token wins over a configured one.
		if k == "Authorization" && r.Header.Get("Authorization") != "" {
			continue
		}
		r.Header.Set(k, v)
	}
	return base.RoundTrip(r)
}

// session is a ports.MCPSession over an SDK client session.
type session struct {
	cs     *sdk.ClientSession
	done   chan struct{}
	mu     sync.Mutex
	err    error
	closed bool
}

func (s *session) ListTools(ctx context.Context) ([]ports.MCPTool, error) {
	var out []ports.MCPTool
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, classify(err, "listing tools failed")
		}
		out = append(out, toolOf(t))
	}
	return out, nil
}

func toolOf(t *sdk.Tool) ports.MCPTool {
	out := ports.MCPTool{Name: t.Name, Title: t.Title, Description: t.Description}
	if t.InputSchema != nil {
		out.InputSchema, _ = json.Marshal(t.InputSchema)
	}
	if t.OutputSchema != nil {
		out.OutputSchema, _ = json.Marshal(t.OutputSchema)
	}
	if a := t.Annotations; a != nil {
		if out.Title == "" {
			out.Title = a.Title
		}
		ro, idem := a.ReadOnlyHint, a.IdempotentHint
		out.Annotations = ports.MCPAnnotations{ReadOnly: &ro, Destructive: a.DestructiveHint, Idempotent: &idem, OpenWorld: a.OpenWorldHint}
	}
	return out
}

func (s *session) CallTool(ctx context.Context, name string, args json.RawMessage) (ports.MCPResult, error) {
	var arguments any = map[string]any{}
	if len(args) > 0 && string(args) != "null" {
		if !json.Valid(args) {
			// Nothing was sent: the connection is as good as it was.
			return ports.MCPResult{}, &ports.MCPError{Kind: ports.MCPProtocol, Message: "the arguments of " + name + " are not valid JSON"}
		}
		arguments = args
	}
	res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: arguments})
	if err != nil {
		return ports.MCPResult{}, classify(err, "the call of "+name+" failed")
	}
	out := ports.MCPResult{IsError: res.IsError}
	if res.StructuredContent != nil {
		out.Structured, _ = json.Marshal(res.StructuredContent)
	}
	for _, c := range res.Content {
		out.Content = append(out.Content, contentOf(c))
	}
	return out, nil
}

func contentOf(c sdk.Content) ports.MCPContent {
	switch v := c.(type) {
	case *sdk.TextContent:
		return ports.MCPContent{Type: "text", Text: v.Text}
	case *sdk.ImageContent:
		return ports.MCPContent{Type: "image", MIMEType: v.MIMEType, Data: base64.StdEncoding.EncodeToString(v.Data)}
	case *sdk.AudioContent:
		return ports.MCPContent{Type: "audio", MIMEType: v.MIMEType, Data: base64.StdEncoding.EncodeToString(v.Data)}
	case *sdk.ResourceLink:
		return ports.MCPContent{Type: "resource_link", URI: v.URI, Name: v.Name, MIMEType: v.MIMEType}
	case *sdk.EmbeddedResource:
		out := ports.MCPContent{Type: "resource"}
		if r := v.Resource; r != nil {
			out.URI, out.MIMEType, out.Text = r.URI, r.MIMEType, r.Text
			if len(r.Blob) > 0 {
				out.Data = base64.StdEncoding.EncodeToString(r.Blob)
			}
		}
		return out
	}
	raw, _ := c.MarshalJSON()
	return ports.MCPContent{Type: "unknown", Text: string(raw)}
}

func (s *session) Done() <-chan struct{} { return s.done }

func (s *session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *session) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return s.cs.Close()
}

// transportCodes are the SDK's JSON-RPC codes for a request that never got
// an answer (rejected by the transport, either side closing, unknown):
// the connection is gone, not the server saying no.
var transportCodes = []int64{-32001, -32003, -32004, -32005}

// classify turns an SDK error into a ports.MCPError: a JSON-RPC error is
// the server's answer (protocol); anything else kept the answer from
// arriving (unreachable). Context errors and classified errors pass.
func classify(err error, what string) error {
	var me *ports.MCPError
	if errors.As(err, &me) || errors.Is(err, context.Canceled) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &ports.MCPError{Kind: ports.MCPUnreachable, Message: what + ": timed out", Err: err}
	}
	var wire *sdkWireError
	if errors.As(err, &wire) && !slices.Contains(transportCodes, wire.Code) && !errors.Is(err, sdk.ErrConnectionClosed) {
		return &ports.MCPError{Kind: ports.MCPProtocol, Message: what + ": " + wire.Message, Err: err}
	}
	return &ports.MCPError{Kind: ports.MCPUnreachable, Message: what + ": " + err.Error(), Err: err}
}
