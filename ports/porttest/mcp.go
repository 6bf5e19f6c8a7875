package porttest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// MCPStore is an in-memory ports.MCPServerStore that keeps the SQLite
// store's rules: names are unique case-insensitively across every row
// (conflict), UpdateMCPServer runs its change on a copy that is stored only
// when the change succeeds (a failed change or a taken name stores
// nothing), an update never moves a row's owner, scope or creation time,
// and SaveMCPGrant writes only when the stored grant is still the expected
// one. Rows are kept as a store keeps them: the config through JSON, times
// in UTC whole milliseconds. Writes are serialised like the store's single
// writer; reads never wait for a write. The zero value is empty and ready.
type MCPStore struct {
	write sync.Mutex // one write at a time, as the single-writer pool
	mu    sync.Mutex // guards rows
	rows  map[string]domain.MCPServer
	// signIns are the waiting sign-ins, by state.
	signIns map[string]domain.MCPSignIn
	// grants are the personal grants, by server id and user id.
	grants map[[2]string]string
}

var _ ports.MCPServerStore = (*MCPStore)(nil)

// ListMCPServers returns every server, newest first (by creation time, then
// id).
func (s *MCPStore) ListMCPServers(ctx context.Context) ([]domain.MCPServer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]domain.MCPServer, 0, len(s.rows))
	for _, r := range s.rows {
		out = append(out, storedMCPServer(r))
	}
	slices.SortFunc(out, func(a, b domain.MCPServer) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return out, nil
}

// FindMCPServer returns not_found when absent.
func (s *MCPStore) FindMCPServer(ctx context.Context, id string) (domain.MCPServer, error) {
	if err := ctx.Err(); err != nil {
		return domain.MCPServer{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rows[id]
	if !ok {
		return domain.MCPServer{}, errs.E(errs.NotFound, "MCP server not found")
	}
	return storedMCPServer(r), nil
}

// InsertMCPServer stores a new row; conflict when its id is taken or its
// name is, case-insensitively, by any row of any owner. A non-nil admit is
// told first how many rows the owner has; its error is returned, nothing
// stored.
func (s *MCPStore) InsertMCPServer(ctx context.Context, srv domain.MCPServer, admit func(owned int) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.write.Lock()
	defer s.write.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if admit != nil {
		owned := 0
		for _, r := range s.rows {
			if r.OwnerID == srv.OwnerID {
				owned++
			}
		}
		if err := admit(owned); err != nil {
			return err
		}
	}
	if _, ok := s.rows[srv.ID]; ok {
		return errs.E(errs.Conflict, "MCP server %s already exists", srv.ID)
	}
	if err := s.nameFreeLocked(srv.ID, srv.Name); err != nil {
		return err
	}
	if s.rows == nil {
		s.rows = map[string]domain.MCPServer{}
	}
	s.rows[srv.ID] = storedMCPServer(srv)
	return nil
}

// UpdateMCPServer runs change on a copy of the stored row and stores its
// name, scope, enabled flag, config, grant and update time when change returns
// nil; it returns the row as change left it, as the SQLite store does.
// not_found when absent, conflict for a taken name, and change's error
// (nothing stored) when it fails.
func (s *MCPStore) UpdateMCPServer(ctx context.Context, id string, change func(*domain.MCPServer) error) (domain.MCPServer, error) {
	if err := ctx.Err(); err != nil {
		return domain.MCPServer{}, err
	}
	s.write.Lock()
	defer s.write.Unlock()
	row, err := s.FindMCPServer(ctx, id)
	if err != nil {
		return domain.MCPServer{}, err
	}
	// change runs without s.mu, as a transaction's callback runs while
	// other connections still read.
	if err := change(&row); err != nil {
		return domain.MCPServer{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.nameFreeLocked(id, row.Name); err != nil {
		return domain.MCPServer{}, err
	}
	cur := s.rows[id]
	cur.Name, cur.Scope, cur.Enabled, cur.Config, cur.SealedGrant, cur.UpdatedAt = row.Name, row.Scope, row.Enabled, row.Config, row.SealedGrant, row.UpdatedAt
	s.rows[id] = storedMCPServer(cur)
	return row, nil
}

// DeleteMCPServer removes a row; not_found when absent.
func (s *MCPStore) DeleteMCPServer(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.write.Lock()
	defer s.write.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.rows[id]; !ok {
		return errs.E(errs.NotFound, "MCP server not found")
	}
	delete(s.rows, id)
	for k := range s.grants {
		if k[0] == id {
			delete(s.grants, k)
		}
	}
	for state, in := range s.signIns {
		if in.ServerID == id {
			delete(s.signIns, state)
		}
	}
	return nil
}

// InsertMCPSignIn stores a waiting sign-in and drops the expired ones;
// conflict when its state waits already or its server is gone.
func (s *MCPStore) InsertMCPSignIn(ctx context.Context, in domain.MCPSignIn, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.write.Lock()
	defer s.write.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for state, w := range s.signIns {
		if !w.ExpiresAt.After(now) {
			delete(s.signIns, state)
		}
	}
	if _, ok := s.rows[in.ServerID]; !ok {
		return errs.E(errs.Conflict, "the MCP server of the sign-in is gone")
	}
	if _, ok := s.signIns[in.State]; ok {
		return errs.E(errs.Conflict, "a sign-in waits under this state already")
	}
	if s.signIns == nil {
		s.signIns = map[string]domain.MCPSignIn{}
	}
	in.ExpiresAt, in.Redirect = storedTime(in.ExpiresAt), nil
	s.signIns[in.State] = in
	return nil
}

// DeliverMCPSignIn hands the sign-in waiting under state its redirect
// once: not_found when none waits at now, check's error as is (nothing
// written), conflict when a redirect came already.
func (s *MCPStore) DeliverMCPSignIn(ctx context.Context, state string, r domain.MCPRedirect, now time.Time,
	check func(domain.MCPSignIn) error) (domain.MCPSignIn, error) {
	if err := ctx.Err(); err != nil {
		return domain.MCPSignIn{}, err
	}
	s.write.Lock()
	defer s.write.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.signIns[state]
	if !ok || !in.ExpiresAt.After(now) {
		return domain.MCPSignIn{}, errs.E(errs.NotFound, "sign-in not found")
	}
	if err := check(in); err != nil {
		return domain.MCPSignIn{}, err
	}
	if in.Redirect != nil {
		return domain.MCPSignIn{}, errs.E(errs.Conflict, "the sign-in received its redirect already")
	}
	stored := in
	stored.Redirect = &r
	s.signIns[state] = stored
	return in, nil
}

// FindMCPSignIn returns the sign-in under state; not_found when none.
func (s *MCPStore) FindMCPSignIn(ctx context.Context, state string) (domain.MCPSignIn, error) {
	if err := ctx.Err(); err != nil {
		return domain.MCPSignIn{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.signIns[state]
	if !ok {
		return domain.MCPSignIn{}, errs.E(errs.NotFound, "sign-in not found")
	}
	if in.Redirect != nil {
		r := *in.Redirect
		in.Redirect = &r
	}
	return in, nil
}

// DeleteMCPSignIn ends the sign-in under state; none is no error.
func (s *MCPStore) DeleteMCPSignIn(ctx context.Context, state string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.write.Lock()
	defer s.write.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.signIns, state)
	return nil
}

// SaveMCPGrant replaces a row's sealed grant when it is still expect and
// reports whether it wrote; a missing row writes nothing (false, no
// error), as the SQLite store's conditional UPDATE does.
func (s *MCPStore) SaveMCPGrant(ctx context.Context, id, expect, sealed string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.write.Lock()
	defer s.write.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.rows[id]
	if !ok || cur.SealedGrant != expect {
		return false, nil
	}
	cur.SealedGrant = sealed
	s.rows[id] = cur
	return true, nil
}

// nameFreeLocked returns conflict when a row other than id has name (case
// aside). s.mu is held.
func (s *MCPStore) nameFreeLocked(id, name string) error {
	for oid, o := range s.rows {
		if oid != id && strings.EqualFold(o.Name, name) {
			return errs.E(errs.Conflict, "an MCP server named %q already exists", name)
		}
	}
	return nil
}

// storedMCPServer is a deep copy of r as the store keeps it: the config
// through its JSON column, the times in UTC milliseconds.
func storedMCPServer(r domain.MCPServer) domain.MCPServer {
	raw, err := json.Marshal(r.Config)
	if err != nil {
		panic("porttest: encode MCP config: " + err.Error())
	}
	r.Config = domain.MCPConfig{}
	if err := json.Unmarshal(raw, &r.Config); err != nil {
		panic("porttest: decode MCP config: " + err.Error())
	}
	r.CreatedAt, r.UpdatedAt = storedTime(r.CreatedAt), storedTime(r.UpdatedAt)
	return r
}

// MCPDialer is a scriptable ports.MCPDialer: each endpoint URL a test
// scripts with Endpoint answers dials with its tools, call handlers and
// failures; a dial of an endpoint never scripted fails as unreachable.
// For OAuth targets it plays the authorization server and the SDK: without
// a grant (or while the endpoint rejects tokens) it signs in through
// target.OAuth.Authorize with an authorize URL carrying state and
// redirect_uri, exchanges the returned code and saves the grant through
// target.OAuth.SaveGrant; with no Authorize it fails with MCPNeedsAuth.
// Safe for concurrent use. The zero value is ready.
type MCPDialer struct {
	mu        sync.Mutex
	endpoints map[string]*MCPEndpoint
	states    int // numbers the OAuth states issued
}

var _ ports.MCPDialer = (*MCPDialer)(nil)

// Endpoint returns the script of the endpoint at rawURL, making an empty
// one (no tools, dials succeed) on first use.
func (d *MCPDialer) Endpoint(rawURL string) *MCPEndpoint {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.endpoints == nil {
		d.endpoints = map[string]*MCPEndpoint{}
	}
	e := d.endpoints[rawURL]
	if e == nil {
		e = &MCPEndpoint{url: rawURL, handlers: map[string]MCPHandler{}}
		d.endpoints[rawURL] = e
	}
	return e
}

func (d *MCPDialer) lookup(rawURL string) *MCPEndpoint {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.endpoints[rawURL]
}

func (d *MCPDialer) nextState() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.states++
	return fmt.Sprintf("state-%d", d.states)
}

// Dial records target at its endpoint, waits while the endpoint is held,
// then fails as scripted or signs in (OAuth) and opens a session. Errors:
// ctx's, *ports.MCPError of the scripted kind, MCPUnreachable for an
// unscripted endpoint, MCPNeedsAuth for OAuth with no grant and no
// Authorize, MCPAuthFailed for a redirect whose state is not the one
// issued, and whatever Authorize or SaveGrant return.
func (d *MCPDialer) Dial(ctx context.Context, target ports.MCPTarget) (ports.MCPSession, error) {
	e := d.lookup(target.Endpoint)
	if e == nil {
		return nil, &ports.MCPError{Kind: ports.MCPUnreachable, Message: "dial " + target.Endpoint + ": connection refused"}
	}
	if gate := e.begin(target); gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := e.dialError(); err != nil {
		return nil, err
	}
	if o := target.OAuth; o != nil {
		if err := d.signIn(ctx, e, o); err != nil {
			return nil, err
		}
	}
	return e.open(target), nil
}

// signIn does what the SDK's OAuth handler does before a session opens:
// a usable grant is used; otherwise the person signs in (at most three
// times in one dial, the way the SDK re-authorizes after a rejected token).
func (d *MCPDialer) signIn(ctx context.Context, e *MCPEndpoint, o *ports.MCPOAuth) error {
	grant := o.Grant
	for range 3 {
		if grant != nil && !e.rejecting() {
			return nil
		}
		if o.Authorize == nil {
			return &ports.MCPError{Kind: ports.MCPNeedsAuth, Message: "the MCP server requires authorization"}
		}
		state := d.nextState()
		q := url.Values{"response_type": {"code"}, "client_id": {cmp.Or(o.ClientID, "registered-client")},
			"redirect_uri": {o.RedirectURL}, "state": {state}}
		if len(o.Scopes) > 0 {
			q.Set("scope", strings.Join(o.Scopes, " "))
		}
		authz, err := o.Authorize(ctx, e.url+"/authorize?"+q.Encode())
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err // the code exchange is a request on ctx
		}
		if authz.State != state {
			return &ports.MCPError{Kind: ports.MCPAuthFailed, Message: "the redirect's state is not the one issued"}
		}
		g := e.grantFor(authz.Code, o.ClientID)
		if o.SaveGrant != nil {
			if err := o.SaveGrant(g); err != nil {
				return err
			}
		}
		grant = &g
	}
	return &ports.MCPError{Kind: ports.MCPAuthFailed, Message: "the MCP server kept rejecting its tokens"}
}

// MCPHandler answers a call of one tool.
type MCPHandler func(ctx context.Context, args json.RawMessage) (ports.MCPResult, error)

// MCPEndpoint is the script of one fake MCP server. Its methods are safe
// for concurrent use and take effect from the next dial (tools: the next
// listing).
type MCPEndpoint struct {
	url string

	mu       sync.Mutex
	tools    []ports.MCPTool
	handlers map[string]MCPHandler
	dialErr  error
	listErr  error
	gate     chan struct{} // non-nil: dials wait for it to close
	reject   bool          // tokens are refused: every dial signs in again
	grant    *domain.MCPGrant
	targets  []ports.MCPTarget
	sessions []*MCPSession
}

// SetTools sets the tools the endpoint lists.
func (e *MCPEndpoint) SetTools(tools ...ports.MCPTool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.tools = slices.Clone(tools)
}

// Handle answers calls of tool with h. A listed tool without a handler
// answers with one text part holding its arguments; an unlisted one fails
// as MCPProtocol.
func (e *MCPEndpoint) Handle(tool string, h MCPHandler) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.handlers[tool] = h
}

// FailDials makes every dial fail with err (an *ports.MCPError, say) until
// it is called with nil.
func (e *MCPEndpoint) FailDials(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.dialErr = err
}

// FailListTools makes every tool listing fail with err until it is called
// with nil.
func (e *MCPEndpoint) FailListTools(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.listErr = err
}

// Hold makes dials wait (after they are recorded) until release is called
// or their context ends, so a test can see a dial in flight.
func (e *MCPEndpoint) Hold() (release func()) {
	gate := make(chan struct{})
	e.mu.Lock()
	e.gate = gate
	e.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Lock()
			if e.gate == gate {
				e.gate = nil
			}
			e.mu.Unlock()
			close(gate)
		})
	}
}

// RejectTokens makes the endpoint refuse every grant (on) — so an OAuth
// dial signs in again when it can and fails with MCPNeedsAuth when it
// cannot — or accept them again (off).
func (e *MCPEndpoint) RejectTokens(on bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reject = on
}

// IssueGrant sets the grant a code exchange yields; by default it is an
// access token naming the code, a refresh token, the endpoint's token URL
// and the client (a registered one when the target names none).
func (e *MCPEndpoint) IssueGrant(g domain.MCPGrant) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.grant = &g
}

// Targets returns what every dial of the endpoint was given, oldest first
// (headers opened, OAuth client and grant; the callbacks are the dial's).
func (e *MCPEndpoint) Targets() []ports.MCPTarget {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.targets)
}

// Sessions returns every session the endpoint opened, oldest first.
func (e *MCPEndpoint) Sessions() []*MCPSession {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.sessions)
}

// Open returns the sessions that are still open, oldest first.
func (e *MCPEndpoint) Open() []*MCPSession {
	return slices.DeleteFunc(e.Sessions(), func(s *MCPSession) bool { return s.Ended() })
}

// Kill ends every open session as a transport failure would: Done closes
// and Err is err.
func (e *MCPEndpoint) Kill(err error) {
	for _, s := range e.Open() {
		s.Kill(err)
	}
}

// begin records a dial's target and returns the gate it waits for (nil:
// none).
func (e *MCPEndpoint) begin(target ports.MCPTarget) <-chan struct{} {
	target.Headers = maps.Clone(target.Headers)
	if target.OAuth != nil {
		o := *target.OAuth
		o.Scopes = slices.Clone(o.Scopes)
		target.OAuth = &o
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.targets = append(e.targets, target)
	return e.gate
}

func (e *MCPEndpoint) dialError() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.dialErr
}

func (e *MCPEndpoint) rejecting() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.reject
}

func (e *MCPEndpoint) grantFor(code, clientID string) domain.MCPGrant {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.grant != nil {
		return *e.grant
	}
	return domain.MCPGrant{AccessToken: "access-" + code, RefreshToken: "refresh-" + code, TokenType: "Bearer",
		TokenURL: e.url + "/token", ClientID: cmp.Or(clientID, "registered-client")}
}

func (e *MCPEndpoint) open(target ports.MCPTarget) *MCPSession {
	s := &MCPSession{e: e, target: target, done: make(chan struct{})}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sessions = append(e.sessions, s)
	return s
}

// MCPSession is a live session of an MCPDialer's endpoint.
type MCPSession struct {
	e      *MCPEndpoint
	target ports.MCPTarget // as the dial was given it, callbacks included

	mu     sync.Mutex
	done   chan struct{}
	err    error
	closed bool // ended by Close
	calls  []MCPCall
}

// MCPCall is one tool call a session received.
type MCPCall struct {
	Tool string
	Args json.RawMessage
}

var _ ports.MCPSession = (*MCPSession)(nil)

// ListTools returns the endpoint's tools; the scripted listing error, or
// MCPUnreachable once the session has ended.
func (s *MCPSession) ListTools(ctx context.Context) ([]ports.MCPTool, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	if s.e.listErr != nil {
		return nil, s.e.listErr
	}
	return slices.Clone(s.e.tools), nil
}

// CallTool records the call and answers it with the tool's handler (see
// MCPEndpoint.Handle); MCPUnreachable once the session has ended.
func (s *MCPSession) CallTool(ctx context.Context, name string, args json.RawMessage) (ports.MCPResult, error) {
	if err := s.usable(ctx); err != nil {
		return ports.MCPResult{}, err
	}
	s.mu.Lock()
	s.calls = append(s.calls, MCPCall{Tool: name, Args: slices.Clone(args)})
	s.mu.Unlock()
	s.e.mu.Lock()
	h := s.e.handlers[name]
	listed := slices.ContainsFunc(s.e.tools, func(t ports.MCPTool) bool { return t.Name == name })
	s.e.mu.Unlock()
	switch {
	case h != nil:
		return h(ctx, args)
	case listed:
		return ports.MCPResult{Content: []ports.MCPContent{{Type: "text", Text: string(args)}}}, nil
	}
	return ports.MCPResult{}, &ports.MCPError{Kind: ports.MCPProtocol, Message: fmt.Sprintf("unknown tool %q", name)}
}

func (s *MCPSession) usable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.Ended() {
		return &ports.MCPError{Kind: ports.MCPUnreachable, Message: "the connection is closed"}
	}
	return nil
}

// Done is closed when the session ends (Close or Kill).
func (s *MCPSession) Done() <-chan struct{} { return s.done }

// Err is why the session ended: nil after Close, Kill's error after Kill.
func (s *MCPSession) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close ends the session; later calls do nothing.
func (s *MCPSession) Close() error {
	s.end(nil, true)
	return nil
}

// Kill ends the session as a lost connection: Done closes, Err is err.
func (s *MCPSession) Kill(err error) { s.end(err, false) }

func (s *MCPSession) end(err error, closed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		return
	default:
	}
	s.err, s.closed = err, closed
	close(s.done)
}

// Ended reports whether the session has ended, whatever ended it.
func (s *MCPSession) Ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Closed reports whether the session was ended by Close (not Kill).
func (s *MCPSession) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Calls returns the calls the session received, oldest first.
func (s *MCPSession) Calls() []MCPCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Target returns what the dial that opened the session was given.
func (s *MCPSession) Target() ports.MCPTarget { return s.target }

// Refresh saves g through the dial's SaveGrant, as the adapter does after
// a token refresh mid-session; it returns SaveGrant's error, and internal
// for a session that is not OAuth.
func (s *MCPSession) Refresh(g domain.MCPGrant) error {
	if s.target.OAuth == nil || s.target.OAuth.SaveGrant == nil {
		return errs.E(errs.Internal, "porttest: the session has no OAuth grant writer")
	}
	return s.target.OAuth.SaveGrant(g)
}

// FindMCPPersonalGrant returns a person's sealed grant ("" for none).
func (s *MCPStore) FindMCPPersonalGrant(ctx context.Context, serverID, userID string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grants[[2]string{serverID, userID}], nil
}

// MCPPersonalGrantHolders returns who keeps a grant for the server, sorted.
func (s *MCPStore) MCPPersonalGrantHolders(ctx context.Context, serverID string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []string{}
	for k := range s.grants {
		if k[0] == serverID {
			out = append(out, k[1])
		}
	}
	slices.Sort(out)
	return out, nil
}

// SaveMCPPersonalGrant replaces a person's grant when it is still expect
// ("" = none; sealed "" removes it); conflict when the server is gone
// (the fake knows no users: any user id is one).
func (s *MCPStore) SaveMCPPersonalGrant(ctx context.Context, serverID, userID, expect, sealed string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.write.Lock()
	defer s.write.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	k := [2]string{serverID, userID}
	if s.grants[k] != expect {
		return false, nil
	}
	if sealed == "" {
		delete(s.grants, k)
		return true, nil
	}
	if _, ok := s.rows[serverID]; !ok {
		return false, errs.E(errs.Conflict, "still referenced by other rows")
	}
	if s.grants == nil {
		s.grants = map[[2]string]string{}
	}
	s.grants[k] = sealed
	return true, nil
}

// DeleteMCPPersonalGrants removes the server's grant of userID, or every
// person's when userID is "".
func (s *MCPStore) DeleteMCPPersonalGrants(ctx context.Context, serverID, userID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.write.Lock()
	defer s.write.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.grants {
		if k[0] == serverID && (userID == "" || k[1] == userID) {
			delete(s.grants, k)
		}
	}
	return nil
}
