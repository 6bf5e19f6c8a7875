package mcp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// AttemptTTL is how long an interactive sign-in waits for the person.
const AttemptTTL = 5 * time.Minute

// urlWait bounds how long Connect waits for the authorize URL.
const urlWait = HandshakeTimeout

// DeliveryPoll is how often a dial waiting for its sign-in looks in the
// store for a callback another replica filed; a callback on this replica
// wakes it at once.
const DeliveryPoll = 500 * time.Millisecond

// attempt is one interactive sign-in: the dial parks in Authorize until
// a callback — on this replica or another — files the authorization
// server's redirect in the store (domain.MCPSignIn). It is single-shot —
// the person got one popup — so a second Authorize in the same attempt
// fails at once.
type attempt struct {
	serverID  string
	owner     string        // the user who asked for the sign-in
	binding   string        // the secret the browser that asked carries back (a cookie)
	redirect  string        // the callback URL the browser returns to
	urlc      chan string   // the authorize URL, sent once
	poke      chan struct{} // a callback here filed the redirect: look now
	done      chan struct{} // closed when superseded or over
	once      sync.Once
	up        chan struct{} // closed when the dial connected (with or without a sign-in)
	upOnce    sync.Once
	state     string // the OAuth state, once the URL is issued
	used      bool   // Authorize was called once already
	delivered bool   // the dial took a delivered code
}

func newAttempt(serverID, owner, redirect string) *attempt {
	return &attempt{serverID: serverID, owner: owner, binding: rand.Text(), redirect: redirect, urlc: make(chan string, 1),
		poke: make(chan struct{}, 1), done: make(chan struct{}), up: make(chan struct{})}
}

// bindingHash is how a binding is kept in the store: hashed, so the row
// alone completes nothing.
func bindingHash(binding string) string {
	sum := sha256.Sum256([]byte(binding))
	return hex.EncodeToString(sum[:])
}

// boundTo reports whether a callback comes back to the sign-in's own
// initiator: from the browser that asked (it carries the binding), or
// from the initiator's own credential. Anyone else holding the authorize
// URL — sent it, say, by the initiator — must not sign the initiator's
// server in with their account.
func boundTo(in domain.MCPSignIn, cb Callback) bool {
	if cb.Caller != nil {
		return cb.Caller.User.ID == in.UserID
	}
	got := cb.Bindings[in.ServerID]
	return got != "" && subtle.ConstantTimeCompare([]byte(bindingHash(got)), []byte(in.BindingHash)) == 1
}

func (a *attempt) abandon() { a.once.Do(func() { close(a.done) }) }

// connected tells Connect the dial is up.
func (a *attempt) connected() { a.upOnce.Do(func() { close(a.up) }) }

// ConnectResult is what Connect reports: the status it left, and for an
// OAuth server without a usable grant, the URL the person signs in at.
type ConnectResult struct {
	Status       domain.MCPStatus
	AuthorizeURL string
	// Binding is the secret the asking browser must carry back to the
	// callback (the edge sets it as a cookie scoped to the callback), so
	// the sign-in completes only there.
	Binding string
}

// Connect (re)connects a server in the background. An OAuth server
// without a usable grant starts an interactive sign-in instead and returns
// its authorize URL, whose redirect is callbackURL (the edge builds it from
// --base-url, else from the request's own scheme and host); connecting
// again while one waits supersedes it with a fresh URL. On a server each
// person signs in to, anyone who sees it connects (and signs in) as
// themselves; otherwise only who may edit it. Returns not_found,
// forbidden, conflict for a disabled server, upstream when the sign-in
// cannot start.
func (s *Service) Connect(ctx context.Context, p domain.Principal, id, callbackURL string) (ConnectResult, error) {
	row, err := s.find(ctx, p, id)
	if err != nil {
		return ConnectResult{}, err
	}
	if !row.Config.PerPersonAuth {
		if err := row.CheckUpdate(p, what); err != nil {
			return ConnectResult{}, err
		}
	}
	if !row.Enabled {
		return ConnectResult{}, errs.E(errs.Conflict, "the MCP server is disabled: enable it before connecting")
	}
	k := keyFor(row, p.User.ID)
	grant, err := s.grantOf(ctx, row, p.User.ID)
	if err != nil {
		return ConnectResult{}, err
	}
	s.mu.Lock()
	needsAuth := s.conns[k] != nil && s.conns[k].needsAuth
	s.mu.Unlock()
	if row.Config.AuthMode != domain.MCPAuthOAuth || (grant != "" && !needsAuth) {
		if row.Config.PerPersonAuth {
			s.dialAgain(k, true)
		} else {
			s.reconnect(id)
		}
		st, _, _ := s.liveWith(row, p.User.ID, grant)
		return ConnectResult{Status: st}, nil
	}
	return s.authorize(ctx, p, row, k, callbackURL)
}

// authorize starts an interactive sign-in of connection k and waits for
// its URL.
func (s *Service) authorize(ctx context.Context, p domain.Principal, row domain.MCPServer, k key, callbackURL string) (ConnectResult, error) {
	a := newAttempt(row.ID, p.User.ID, callbackURL)
	s.mu.Lock()
	if s.root.Err() != nil {
		s.mu.Unlock()
		return ConnectResult{}, errs.E(errs.Unavailable, "the server is shutting down")
	}
	c := s.connLocked(k)
	var closed ending
	gen, dctx := s.supersede(c, authorizing, &closed)
	c.auth, c.lastErr, c.failures = a, "", 0
	s.mu.Unlock()
	s.finish(closed)
	finished := make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(finished)
		defer a.abandon()
		s.dial(dctx, k, gen, a)
	}()
	timer := time.NewTimer(urlWait)
	defer timer.Stop()
	select {
	case u := <-a.urlc:
		return ConnectResult{Status: domain.MCPAuthorizing, AuthorizeURL: u, Binding: a.binding}, nil
	case <-a.up:
		// The stored grant worked after all: no sign-in was needed.
		return ConnectResult{Status: domain.MCPConnected}, nil
	case <-finished:
		// The dial ended without asking for a sign-in: the server could not
		// be reached, or refused.
		st, lastErr, _ := s.live(ctx, row, p.User.ID)
		if st == domain.MCPConnected {
			return ConnectResult{Status: st}, nil
		}
		return ConnectResult{}, errs.E(errs.Upstream, "the sign-in could not start: %s", lastErr)
	case <-timer.C:
		return ConnectResult{}, errs.E(errs.Upstream, "the MCP server gave no authorize URL within %s", urlWait)
	case <-ctx.Done():
		return ConnectResult{}, ctx.Err()
	}
}

// park is the dial's Authorize during an interactive attempt: it files
// the sign-in in the store, issues the URL to Connect and waits for a
// callback — on any replica — to file the redirect.
func (s *Service) park(ctx context.Context, a *attempt, name, authorizeURL string) (ports.MCPAuthorization, error) {
	s.mu.Lock()
	if a.used {
		s.mu.Unlock()
		return ports.MCPAuthorization{}, &ports.MCPError{Kind: ports.MCPAuthFailed,
			Message: "the MCP server asked for a second sign-in right after the first: the authorization it got did not give it a working session"}
	}
	a.used = true
	s.mu.Unlock()
	u, err := url.Parse(authorizeURL)
	if err != nil || u.Query().Get("state") == "" {
		return ports.MCPAuthorization{}, &ports.MCPError{Kind: ports.MCPAuthFailed, Message: "the authorize URL carries no state"}
	}
	state := u.Query().Get("state")
	store := context.WithoutCancel(ctx)
	// Filed before it is registered here: a supersede that finds the
	// state registered may end the row, which then exists to be ended.
	now := s.d.Clock.Now()
	if err := s.d.Store.InsertMCPSignIn(store, domain.MCPSignIn{State: state, ServerID: a.serverID, UserID: a.owner,
		BindingHash: bindingHash(a.binding), RedirectURL: a.redirect, ExpiresAt: now.Add(AttemptTTL)}, now); err != nil {
		return ports.MCPAuthorization{}, &ports.MCPError{Kind: ports.MCPAuthFailed, Message: "the sign-in could not be recorded: " + err.Error(), Err: err}
	}
	defer func() {
		if err := s.d.Store.DeleteMCPSignIn(store, state); err != nil {
			s.d.Log.Warn("ending a sign-in in the store failed; it expires by itself", "server_id", a.serverID, "err", err)
		}
	}()
	s.mu.Lock()
	select {
	case <-a.done:
		s.mu.Unlock()
		return ports.MCPAuthorization{}, &ports.MCPError{Kind: ports.MCPNeedsAuth, Message: "the sign-in was superseded by a newer one"}
	default:
	}
	a.state = state
	if s.attempts == nil {
		s.attempts = map[string]*attempt{}
	}
	s.attempts[state] = a
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.attempts[state] == a {
			delete(s.attempts, state)
		}
		s.mu.Unlock()
	}()
	s.d.Log.Info("authorization URL issued", "server", name, "server_id", a.serverID, "redirect_uri", u.Query().Get("redirect_uri"))
	a.urlc <- authorizeURL
	timer := time.NewTimer(AttemptTTL)
	defer timer.Stop()
	poll := time.NewTicker(DeliveryPoll)
	defer poll.Stop()
	for {
		select {
		case <-a.poke:
		case <-poll.C:
		case <-a.done:
			return ports.MCPAuthorization{}, &ports.MCPError{Kind: ports.MCPNeedsAuth, Message: "the sign-in was superseded by a newer one"}
		case <-timer.C:
			return ports.MCPAuthorization{}, &ports.MCPError{Kind: ports.MCPNeedsAuth, Message: "the sign-in expired after 5 minutes without a callback"}
		case <-ctx.Done():
			return ports.MCPAuthorization{}, ctx.Err()
		}
		in, err := s.d.Store.FindMCPSignIn(ctx, state)
		if errs.Is(err, errs.NotFound) {
			// Only this dial and a supersede end the row; a supersede
			// closes done too, which the next turn sees.
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return ports.MCPAuthorization{}, ctx.Err()
			}
			s.d.Log.Warn("reading the sign-in from the store failed; trying again", "server_id", a.serverID, "err", err)
			continue
		}
		if in.Redirect == nil {
			continue
		}
		if in.Redirect.Refusal != "" {
			return ports.MCPAuthorization{}, &ports.MCPError{Kind: ports.MCPAuthFailed, Message: "the authorization server refused the sign-in: " + in.Redirect.Refusal}
		}
		// Marked delivered before the dial can see the code: a dial that
		// fails right after the exchange must know a code came
		// (notAccepted).
		s.mu.Lock()
		a.delivered = true
		s.mu.Unlock()
		code, err := s.box.Open(codePlace(state), in.Redirect.SealedCode)
		if err != nil {
			return ports.MCPAuthorization{}, &ports.MCPError{Kind: ports.MCPAuthFailed, Message: "the delivered authorization code cannot be opened: " + err.Error(), Err: err}
		}
		return ports.MCPAuthorization{Code: code, State: state, Iss: in.Redirect.Iss}, nil
	}
}

// Callback is what the authorization server's redirect carried, and who
// brought it back.
type Callback struct {
	State, Code, Iss   string
	Error, Description string
	// Bindings are the sign-in secrets the browser carried, by server id
	// (ConnectResult.Binding, kept in cookies).
	Bindings map[string]string
	// Caller, when set, is the signed-in person who hands the redirect in
	// (Complete); Bindings are then not needed.
	Caller *domain.Principal
}

// Complete hands in a redirect the caller's browser landed on — the
// callback URL, pasted by a person or a script that began the sign-in
// outside a browser — signed in as the person who began it. Returns
// validation for a URL that is no callback, and Deliver's errors.
func (s *Service) Complete(p domain.Principal, callbackURL string) error {
	u, err := url.Parse(callbackURL)
	if err != nil || u.Query().Get("state") == "" {
		return errs.Field("url", "must be the address the sign-in came back to, with its state and code")
	}
	q := u.Query()
	return s.Deliver(Callback{State: q.Get("state"), Code: q.Get("code"), Iss: q.Get("iss"), Error: q.Get("error"),
		Description: q.Get("error_description"), Caller: &p})
}

// deliverTimeout bounds a callback's store work.
const deliverTimeout = 10 * time.Second

// Deliver files a redirect for the sign-in waiting for its state, on
// whichever replica began it: the sign-in's dial there takes it from the
// store. Returns not_found when none waits (expired, superseded, or a
// stale tab), forbidden when it comes back to someone other than who
// began it — the sign-in then goes on waiting for its initiator —,
// conflict when a redirect came already, and upstream when the
// authorization server refused (the sign-in then fails).
func (s *Service) Deliver(cb Callback) error {
	if cb.State == "" {
		return s.notWaiting()
	}
	var refusal, sealed string
	if cb.Error != "" {
		refusal = cb.Error
		if cb.Description != "" {
			refusal += ": " + cb.Description
		}
	} else if cb.Code != "" {
		var err error
		if sealed, err = s.box.Seal(codePlace(cb.State), cb.Code); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.root), deliverTimeout)
	defer cancel()
	in, err := s.d.Store.DeliverMCPSignIn(ctx, cb.State, domain.MCPRedirect{SealedCode: sealed, Iss: cb.Iss, Refusal: refusal}, s.d.Clock.Now(),
		func(in domain.MCPSignIn) error {
			if !boundTo(in, cb) {
				s.d.Log.Warn("callback: could not deliver authorization code", "server_id", in.ServerID,
					"reason", "the callback came back to someone other than who began the sign-in", "by_caller", cb.Caller != nil)
				return errs.E(errs.Forbidden, "this sign-in was begun by another account or in another browser, so this page completed nothing: "+
					"the person who clicked Connect finishes it in the browser they clicked it in")
			}
			if refusal == "" && cb.Code == "" {
				s.d.Log.Warn("callback: could not deliver authorization code", "server_id", in.ServerID, "reason", "the redirect carried no code")
				return errs.E(errs.Validation, "the redirect carried no authorization code")
			}
			return nil
		})
	switch {
	case errs.Is(err, errs.NotFound):
		return s.notWaiting()
	case errs.Is(err, errs.Conflict):
		s.d.Log.Warn("callback: could not deliver authorization code", "reason", "a code was already delivered for this sign-in")
		return errs.E(errs.Conflict, "this sign-in already received its code")
	case err != nil:
		return err
	}
	// The dial waiting here (if it is this replica's) looks at once; one on
	// another replica finds it at its next look.
	s.mu.Lock()
	if a := s.attempts[cb.State]; a != nil {
		select {
		case a.poke <- struct{}{}:
		default:
		}
	}
	s.mu.Unlock()
	if refusal != "" {
		s.d.Log.Warn("callback: could not deliver authorization code", "server_id", in.ServerID, "reason", "the authorization server answered "+refusal)
		return errs.E(errs.Upstream, "the authorization server refused the sign-in: %s", refusal)
	}
	s.d.Log.Info("callback: authorization code delivered", "server_id", in.ServerID)
	return nil
}

// notWaiting is Deliver's answer when no sign-in waits for the state.
func (s *Service) notWaiting() error {
	s.d.Log.Warn("callback: could not deliver authorization code", "reason", "no sign-in is waiting for this state (expired, superseded or already used)")
	return errs.E(errs.NotFound, "no sign-in is waiting for this callback: it expired or was superseded; connect again")
}

// ClearGrant drops a server's stored OAuth grant (to sign in again, say
// with another account) and reconnects it, which then needs a sign-in. On
// a server each person signs in to it signs the caller out (SignOut).
// Returns not_found, forbidden.
func (s *Service) ClearGrant(ctx context.Context, p domain.Principal, id string) (Server, error) {
	if row, err := s.find(ctx, p, id); err == nil && row.Config.PerPersonAuth {
		return s.SignOut(ctx, p, id)
	}
	row, err := s.d.Store.UpdateMCPServer(ctx, id, func(row *domain.MCPServer) error {
		if err := row.CheckUpdate(p, what); err != nil {
			return err
		}
		row.SealedGrant = ""
		return nil
	})
	if err != nil {
		return Server{}, err
	}
	s.d.Log.Info("mcp oauth grant cleared", "server", row.Name, "server_id", id)
	if row.Enabled {
		s.reconnect(id)
	} else {
		s.disconnect(id)
	}
	return s.view(ctx, row, p.User.ID), nil
}

// oauthFor gives connection k's dial what OAuth needs: the client, the
// stored grant (sealed: grant), the one writer of grants, and — for an
// interactive attempt — Authorize.
func (s *Service) oauthFor(row domain.MCPServer, k key, grant string, a *attempt) (*ports.MCPOAuth, error) {
	secret, err := s.box.Open(secretPlace(row.ID), row.Config.OAuthClientSecret)
	if err != nil {
		return nil, err
	}
	o := &ports.MCPOAuth{ClientID: row.Config.OAuthClientID, ClientSecret: secret, Scopes: row.Config.OAuthScopes}
	if a != nil {
		o.RedirectURL = a.redirect
	}
	if grant != "" {
		plain, err := s.box.Open(grantPlaceOf(k), grant)
		if err != nil {
			return nil, err
		}
		var g domain.MCPGrant
		if err := json.Unmarshal([]byte(plain), &g); err != nil {
			return nil, errs.Wrap(errs.Internal, err, "the stored OAuth grant of %s is damaged", row.Name)
		}
		o.Grant = &g
	}
	var mu sync.Mutex
	stored := grant
	o.SaveGrant = func(g domain.MCPGrant) error {
		mu.Lock()
		defer mu.Unlock()
		sealed, err := s.saveGrant(row, k, stored, g)
		if err != nil {
			return err
		}
		stored = sealed
		return nil
	}
	if a != nil {
		o.Authorize = func(ctx context.Context, authorizeURL string) (ports.MCPAuthorization, error) {
			return s.park(ctx, a, row.Name, authorizeURL)
		}
	}
	return o, nil
}

// notAccepted is how a dial that had its code fails: the sign-in went
// through in the browser, but it did not yield a working session. The log
// line and whether a token was stored tell the two causes apart.
func (s *Service) notAccepted(k key, row domain.MCPServer, err error) error {
	id, name := row.ID, row.Name
	hasToken := false
	if row, ferr := s.d.Store.FindMCPServer(context.WithoutCancel(s.root), id); ferr == nil {
		g, _ := s.grantOf(context.WithoutCancel(s.root), row, k.user)
		hasToken = g != ""
	}
	hint := "the authorization response was refused before any token exchange: check the authorization server's metadata " +
		"(RFC 9207 iss and authorization_response_iss_parameter_supported, issuer)"
	if hasToken {
		hint = "a token was issued and stored but the MCP server refused it: set oauth_scopes to what it requires, or check the token's audience"
	}
	s.d.Log.Warn("authorization completed but was not accepted", "server", name, "server_id", id, "has_oauth_token", hasToken,
		"err", err, "hint", hint)
	return &ports.MCPError{Kind: ports.MCPAuthFailed, Message: "authorization completed but was not accepted: " + err.Error() + " (" + hint + ")", Err: err}
}
