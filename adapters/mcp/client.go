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
	"net/url"
	"slices"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/internal/egress"
	"github.com/agents-server/agents-server/ports"
)

// Dialer is a ports.MCPDialer. The zero value is ready.
type Dialer struct {
	// Version is the workbench's version, sent in the handshake.
	Version string

	once       sync.Once
	transports *egress.Transports
}

var _ ports.MCPDialer = (*Dialer)(nil)

// MaxMessageBytes bounds one message read from an MCP server (a JSON answer,
// or one event of a stream): a server cannot make the workbench hold more
// than this of one answer. What a result keeps is bounded further by core.
const MaxMessageBytes = 16 << 20

// base returns the client a target's requests go through: its owner's
// outbound policy checked on every dial (OAuth discovery, registration
// and token requests included), the environment's proxy, and every answer
// bounded.
func (d *Dialer) base(p domain.OutboundPolicy, notes *wireNotes) *http.Client {
	d.once.Do(func() {
		d.transports = egress.New(egress.Options{Proxy: http.ProxyFromEnvironment, Tune: func(tr *http.Transport) {
			tr.MaxIdleConnsPerHost = 8
		}})
	})
	return &http.Client{Transport: boundedTransport{base: d.transports.For(p), notes: notes}}
}

// Dial implements ports.MCPDialer.
func (d *Dialer) Dial(ctx context.Context, target ports.MCPTarget) (ports.MCPSession, error) {
	if target.Stdio != nil {
		return d.dialStdio(ctx, target)
	}
	endpoint, err := url.Parse(target.Endpoint)
	if err != nil || endpoint.Host == "" {
		return nil, &ports.MCPError{Kind: ports.MCPProtocol, Message: "the endpoint is not an absolute URL"}
	}
	notes := &wireNotes{}
	base := d.base(target.Outbound, notes)
	client := &http.Client{Transport: headerTransport{base: base.Transport, origin: originOf(endpoint), headers: target.Headers},
		CheckRedirect: sameOrigin(endpoint)}
	transport := &sdk.StreamableClientTransport{Endpoint: target.Endpoint, HTTPClient: client}
	if target.OAuth != nil {
		h, err := oauthHandler(target, base)
		if err != nil {
			return nil, err
		}
		transport.OAuthHandler = h
	}
	cs, err := d.client().Connect(ctx, transport, nil)
	if err != nil {
		if refused := notes.refused.Load(); refused != nil {
			err = refused
		}
		return nil, classify(err, "could not connect to "+target.Name)
	}
	return watch(&session{cs: cs, notes: notes}), nil
}

// watch starts following a session: Done closes when it ends, and Err then
// says why (for a stdio server, how its program ended) unless it was
// closed on purpose.
func watch(s *session) *session {
	s.done = make(chan struct{})
	go func() {
		err := s.cs.Wait()
		if p := s.program; p != nil && p.exitsWithin(stopGrace) {
			err = errors.New("the program " + p.status)
		}
		s.mu.Lock()
		if !s.closed {
			s.err = err
		}
		s.mu.Unlock()
		close(s.done)
	}()
	return s
}

// client is the SDK client a dial connects with, named in the handshake.
func (d *Dialer) client() *sdk.Client {
	version := d.Version
	if version == "" {
		version = "dev"
	}
	return sdk.NewClient(&sdk.Implementation{Name: "agents-server", Version: version}, nil)
}

// originOf is a URL's scheme and host, as a browser compares origins.
func originOf(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

// errOtherOrigin refuses a redirect off the configured endpoint's origin:
// its credentials must not follow, and a redirect is no way to move an
// MCP server (edit its endpoint).
var errOtherOrigin = errors.New("the MCP server redirected to another origin, which the workbench does not follow " +
	"(the configured credentials go only to the endpoint's own origin): set the endpoint to where it redirects")

// sameOrigin lets the MCP transport follow a redirect within the
// endpoint's origin only.
func sameOrigin(endpoint *url.URL) func(*http.Request, []*http.Request) error {
	origin := originOf(endpoint)
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		if originOf(req.URL) != origin {
			return errOtherOrigin
		}
		return nil
	}
}

// headerTransport adds the server's configured headers to the requests
// for its endpoint's origin, and to no other.
type headerTransport struct {
	base    http.RoundTripper
	origin  string
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) == 0 || originOf(r.URL) != t.origin {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		// The OAuth handler's bearer token wins over a configured one.
		if k == "Authorization" && r.Header.Get("Authorization") != "" {
			continue
		}
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

// session is a ports.MCPSession over an SDK client session.
type session struct {
	cs      *sdk.ClientSession
	notes   *wireNotes
	program *program // a stdio server's; nil over HTTP
	done    chan struct{}
	mu      sync.Mutex
	err     error
	closed  bool
}

func (s *session) ListTools(ctx context.Context) ([]ports.MCPTool, error) {
	var out []ports.MCPTool
	cutBefore := s.notes.cut.Load()
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			if s.notes.cut.Load() > cutBefore {
				err = errTooLarge
			}
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
	cutBefore := s.notes.cut.Load()
	res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: arguments})
	if err != nil {
		if s.notes.cut.Load() > cutBefore {
			// The SDK reports a stream it could not read as a request
			// without answer; say why there was none.
			err = errTooLarge
		}
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
	err := s.cs.Close()
	if s.program != nil {
		s.program.stop()
	}
	return err
}

// transportCodes are the SDK's JSON-RPC codes for a request that never got
// an answer (rejected by the transport, either side closing, unknown):
// the connection is gone, not the server saying no.
var transportCodes = []int64{-32001, -32003, -32004, -32005}

// classify turns an SDK error into a ports.MCPError: a JSON-RPC error is
// the server's answer (protocol); anything else kept the answer from
// arriving (unreachable). The server's words are cut short: an address
// that is no MCP server never gets its page quoted back. Context errors
// and classified errors pass.
func classify(err error, what string) error {
	var me *ports.MCPError
	if errors.As(err, &me) || errors.Is(err, context.Canceled) {
		return err
	}
	var refused *domain.OutboundRefusal
	if errors.As(err, &refused) {
		return &ports.MCPError{Kind: ports.MCPRefused, Message: what + ": " + refused.Error(), Err: err}
	}
	if errors.Is(err, errOtherOrigin) {
		return &ports.MCPError{Kind: ports.MCPUnreachable, Message: what + ": " + errOtherOrigin.Error(), Err: err}
	}
	if errors.Is(err, errTooLarge) {
		return &ports.MCPError{Kind: ports.MCPUnreachable, Message: what + ": " + errTooLarge.Error(), Err: err}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &ports.MCPError{Kind: ports.MCPUnreachable, Message: what + ": timed out", Err: err}
	}
	var wire *sdkWireError
	if errors.As(err, &wire) && !slices.Contains(transportCodes, wire.Code) && !errors.Is(err, sdk.ErrConnectionClosed) {
		return &ports.MCPError{Kind: ports.MCPProtocol, Message: what + ": " + errs.Short(wire.Message), Err: err}
	}
	return &ports.MCPError{Kind: ports.MCPUnreachable, Message: what + ": " + errs.Short(err.Error()), Err: err}
}
