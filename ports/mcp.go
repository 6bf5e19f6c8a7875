package ports

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// MCPServerStore keeps MCP server rows and their OAuth grants.
type MCPServerStore interface {
	// ListMCPServers returns every server, newest first.
	ListMCPServers(ctx context.Context) ([]domain.MCPServer, error)
	// FindMCPServer returns not_found when absent.
	FindMCPServer(ctx context.Context, id string) (domain.MCPServer, error)
	// InsertMCPServer stores a new row; conflict when its name is taken
	// (case-insensitively, across every owner). When admit is not nil it
	// is first told, in the same transaction, how many rows the new row's
	// owner has (any scope); its error is returned as is, nothing written,
	// so parallel inserts cannot pass a cap between the count and the
	// insert.
	InsertMCPServer(ctx context.Context, s domain.MCPServer, admit func(owned int) error) error
	// UpdateMCPServer runs change on the stored row in one transaction and
	// stores what it leaves (name, scope, enabled, config, grant, update
	// time; never owner or creation time); not_found when absent, conflict
	// for a taken name.
	UpdateMCPServer(ctx context.Context, id string, change func(*domain.MCPServer) error) (domain.MCPServer, error)
	// DeleteMCPServer removes a row; not_found when absent.
	DeleteMCPServer(ctx context.Context, id string) error
	// SaveMCPGrant replaces a row's sealed grant ("" clears it) when the
	// row's grant is still expect — a refresh racing a clear or a new
	// sign-in must not bring an old grant back. It reports whether it wrote.
	SaveMCPGrant(ctx context.Context, id, expect, sealed string) (bool, error)
	// FindMCPPersonalGrant returns the sealed grant a person keeps for a
	// server whose people sign in each ("" when they have none).
	FindMCPPersonalGrant(ctx context.Context, serverID, userID string) (string, error)
	// MCPPersonalGrantHolders returns the ids of the people who keep a
	// grant for the server, sorted.
	MCPPersonalGrantHolders(ctx context.Context, serverID string) ([]string, error)
	// SaveMCPPersonalGrant replaces a person's sealed grant for a server
	// ("" removes it) when what is stored is still expect ("" = none), as
	// SaveMCPGrant does; it reports whether it wrote. conflict when the
	// server or the person is gone. A server's and a person's grants go
	// with them.
	SaveMCPPersonalGrant(ctx context.Context, serverID, userID, expect, sealed string) (bool, error)
	// DeleteMCPPersonalGrants removes a server's personal grants: the one
	// of userID, or every person's when userID is "". None is no error.
	DeleteMCPPersonalGrants(ctx context.Context, serverID, userID string) error
	// InsertMCPSignIn stores a sign-in waiting for its callback and drops
	// the expired ones (at now); conflict when its state waits already or
	// its server is gone. A server's sign-ins go with it.
	InsertMCPSignIn(ctx context.Context, in domain.MCPSignIn, now time.Time) error
	// DeliverMCPSignIn hands the sign-in waiting under state its redirect,
	// once, in one transaction: not_found when none waits (never issued,
	// ended, or expired at now); check is then told the sign-in and its
	// error is returned as is, nothing written (a callback brought back by
	// someone else leaves it waiting); conflict when a redirect came
	// already. It returns the sign-in as it waited.
	DeliverMCPSignIn(ctx context.Context, state string, r domain.MCPRedirect, now time.Time, check func(domain.MCPSignIn) error) (domain.MCPSignIn, error)
	// FindMCPSignIn returns the sign-in under state with its redirect once
	// delivered, expired or not; not_found when there is none.
	FindMCPSignIn(ctx context.Context, state string) (domain.MCPSignIn, error)
	// DeleteMCPSignIn ends the sign-in under state; none is no error.
	DeleteMCPSignIn(ctx context.Context, state string) error
}

// MCPDialer opens connections to MCP servers over streamable HTTP.
type MCPDialer interface {
	// Dial connects and completes the MCP handshake. It returns when the
	// session is up, or with an error (*MCPError for what the server or
	// its authorization refused). ctx bounds the handshake only; the
	// session lives until Close or until the server goes away.
	Dial(ctx context.Context, target MCPTarget) (MCPSession, error)
}

// MCPTarget is a server's resolved connection: its endpoint and headers
// with secrets opened, and for OAuth, what the sign-in needs; or, for a
// stdio server, the program to start.
type MCPTarget struct {
	ServerID string
	Name     string
	Endpoint string
	Headers  map[string]string
	OAuth    *MCPOAuth // nil: header auth only
	Stdio    *MCPStdio // set: a program spoken to over stdio (Endpoint unused)
	// Outbound is what the endpoint and its OAuth servers may reach: the
	// policy of the server's owner. The zero value refuses private
	// addresses.
	Outbound domain.OutboundPolicy
}

// MCPStdio is a program that speaks MCP over its stdin and stdout. The
// session lives as long as the program: its exit ends the session, and
// closing the session ends the program (and, on the host, its process
// group).
type MCPStdio struct {
	Command string
	Args    []string
	// Env is the program's environment beyond the minimal one the host
	// gives it (PATH, HOME, LANG...): never the workbench's own variables,
	// which hold its keys.
	Env map[string]string
	// Exec, when set, runs the program elsewhere — a project's sandbox —
	// rather than on this host: it runs req until the program exits or
	// ctx ends, streaming req.Stdin to it and its output to req.Stdout and
	// req.Stderr, and returns its exit code.
	Exec func(ctx context.Context, req ExecRequest) (int, error)
	// Stderr receives what the program writes to its standard error.
	Stderr io.Writer
}

// MCPOAuth is what an OAuth connection needs from core: the configured
// client, the stored grant and two callbacks.
type MCPOAuth struct {
	ClientID     string // "" = register dynamically
	ClientSecret string
	Scopes       []string
	RedirectURL  string
	// Grant is the stored grant; nil when there is none.
	Grant *domain.MCPGrant
	// SaveGrant persists a new or refreshed grant (the one writer of
	// grants); the adapter calls it after every exchange and refresh.
	SaveGrant func(domain.MCPGrant) error
	// Authorize hands an authorize URL to the person and waits for the
	// redirect's code, state and iss. nil: the dial must not sign in
	// interactively and fails with MCPNeedsAuth instead.
	Authorize func(ctx context.Context, authorizeURL string) (MCPAuthorization, error)
}

// MCPAuthorization is what the authorization server's redirect delivered.
type MCPAuthorization struct {
	Code, State, Iss string
}

// MCPSession is one live connection.
type MCPSession interface {
	// ListTools returns every tool the server offers (all pages).
	ListTools(ctx context.Context) ([]MCPTool, error)
	// CallTool calls a tool by its own (unprefixed) name. A tool that
	// answers with isError is a result, not an error; errors are for
	// calls that got no answer.
	CallTool(ctx context.Context, name string, args json.RawMessage) (MCPResult, error)
	// Done is closed when the connection ends, whatever ended it.
	Done() <-chan struct{}
	// Err says why the connection ended (nil after Close); valid once
	// Done is closed.
	Err() error
	// Close ends the session.
	Close() error
}

// MCPTool is a tool as its server describes it.
type MCPTool struct {
	Name         string
	Title        string
	Description  string
	InputSchema  json.RawMessage // a JSON Schema object
	OutputSchema json.RawMessage // nil when the tool declares none
	Annotations  MCPAnnotations
}

// MCPAnnotations are a tool's hints. They are the server's claims: shown
// to people, never trusted for approval or planning.
type MCPAnnotations struct {
	ReadOnly    *bool `json:"readOnlyHint,omitempty"`
	Destructive *bool `json:"destructiveHint,omitempty"`
	Idempotent  *bool `json:"idempotentHint,omitempty"`
	OpenWorld   *bool `json:"openWorldHint,omitempty"`
}

// MCPResult is a tool call's answer.
type MCPResult struct {
	Content    []MCPContent
	Structured json.RawMessage // structuredContent; nil when absent
	IsError    bool
}

// MCPContent is one part of a result: text, an image or audio (base64
// data with its MIME type), or a resource (its URI, and text when
// embedded).
type MCPContent struct {
	Type     string `json:"type"` // text, image, audio, resource_link, resource
	Text     string `json:"text,omitempty"`
	MIMEType string `json:"mime_type,omitempty"`
	Data     string `json:"data,omitempty"` // base64
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
}

// MCPErrorKind classifies a failed dial or call.
type MCPErrorKind string

// The kinds.
const (
	// MCPUnreachable: the transport failed (refused, reset, timed out, 5xx).
	MCPUnreachable MCPErrorKind = "unreachable"
	// MCPNeedsAuth: OAuth is required and no usable grant exists (or the
	// refresh token was rejected); the person must sign in again.
	MCPNeedsAuth MCPErrorKind = "needs_auth"
	// MCPAuthFailed: the sign-in itself failed (a refused code, bad
	// metadata, an issuer mismatch).
	MCPAuthFailed MCPErrorKind = "auth_failed"
	// MCPProtocol: the server answered, but not as MCP expects (a JSON-RPC
	// error, a bad handshake, an unknown tool).
	MCPProtocol MCPErrorKind = "protocol"
	// MCPRefused: the outbound policy refused the address the endpoint (or
	// its OAuth server) resolved to; dialling again cannot help until an
	// admin allows it or the endpoint changes.
	MCPRefused MCPErrorKind = "refused"
)

// MCPError is a classified MCP failure.
type MCPError struct {
	Kind    MCPErrorKind
	Message string
	Err     error
}

func (e *MCPError) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *MCPError) Unwrap() error { return e.Err }
