package mcp

import (
	"context"
	"encoding/json"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/ports"
)

// A shared OAuth server may say each person signs in to it with their own
// account (MCPConfig.PerPersonAuth): each person's grant is kept apart
// (the store's personal grants), each person's use of the server goes
// through a connection of its own, keyed by server and person, and a run
// uses the grant of the person it runs for. The shared grant of the row
// stays empty then.

// key names one live connection: a server's shared one (user ""), or one
// person's to a server each person signs in to.
type key struct{ server, user string }

// keyFor is the connection a person's use of row goes through.
func keyFor(row domain.MCPServer, user string) key {
	if row.Config.PerPersonAuth {
		return key{row.ID, user}
	}
	return key{server: row.ID}
}

// grantOf reads the sealed grant a person's use of row goes through: the
// row's shared one, or, when each person signs in, the person's own.
func (s *Service) grantOf(ctx context.Context, row domain.MCPServer, user string) (string, error) {
	if !row.Config.PerPersonAuth {
		return row.SealedGrant, nil
	}
	if user == "" {
		return "", nil
	}
	return s.d.Store.FindMCPPersonalGrant(ctx, row.ID, user)
}

// grantPlaceOf is where connection k's grant is sealed: a person's grant
// is bound to the person, so no row's grant opens as another's.
func grantPlaceOf(k key) string {
	if k.user == "" {
		return grantPlace(k.server)
	}
	return secrets.Place("mcp_personal_grants", "oauth_grant", k.server, k.user)
}

// saveGrant is the one writer of OAuth grants, shared or a person's: it
// seals g for connection k and stores it in place of expect (the sealed
// grant the connection last saw), and returns what it stored. A grant
// cleared or replaced meanwhile (a sign-out, another sign-in) is kept, and
// the connection is told it needs a sign-in.
func (s *Service) saveGrant(row domain.MCPServer, k key, expect string, g domain.MCPGrant) (string, error) {
	raw, err := json.Marshal(g)
	if err != nil {
		return "", err
	}
	sealed, err := s.box.Seal(grantPlaceOf(k), string(raw))
	if err != nil {
		return "", err
	}
	ctx := context.WithoutCancel(s.root)
	if expect == "" {
		// A new sign-in (not a refresh) is recorded, as the person's own
		// when each person signs in.
		if k.user != "" {
			ctx = ports.WithActor(ctx, domain.Actor{Kind: domain.ActorUser, ID: k.user})
		}
		ctx = audit.Change(ctx, s.d.Clock.Now(), "mcp_server.signin", audit.Object{Kind: "mcp_server", ID: row.ID, Name: row.Name}, "oauth_grant")
	}
	var ok bool
	if k.user == "" {
		ok, err = s.d.Store.SaveMCPGrant(ctx, row.ID, expect, sealed)
	} else {
		ok, err = s.d.Store.SaveMCPPersonalGrant(ctx, row.ID, k.user, expect, sealed)
	}
	if err != nil {
		return "", err
	}
	if !ok {
		return "", &ports.MCPError{Kind: ports.MCPNeedsAuth, Message: "the sign-in was cleared or replaced while this connection used it"}
	}
	if expect == "" {
		s.d.Log.Info("mcp oauth grant created", "server", row.Name, "server_id", row.ID, "user_id", k.user)
	}
	// Known here, so it is not mistaken for another replica's sign-in.
	s.mu.Lock()
	if c := s.conns[k]; c != nil {
		c.grant = sealed
	}
	s.mu.Unlock()
	return sealed, nil
}

// revokePersonal is the one remover of personal grants: it drops the
// server's grant of user, or every person's when user is "", and ends the
// connections they served.
func (s *Service) revokePersonal(ctx context.Context, row domain.MCPServer, user string) error {
	action := "mcp_server.signout"
	if user == "" {
		action = "mcp_server.revoke_signins" // every person's, at a change of mode or endpoint
	}
	actx := audit.Change(ctx, s.d.Clock.Now(), action, audit.Object{Kind: "mcp_server", ID: row.ID, Name: row.Name}, "oauth_grant")
	if err := s.d.Store.DeleteMCPPersonalGrants(actx, row.ID, user); err != nil {
		return err
	}
	s.d.Log.Info("mcp oauth personal grants revoked", "server", row.Name, "server_id", row.ID, "user_id", user)
	s.disconnectWhere(func(k key) bool { return k.server == row.ID && k.user != "" && (user == "" || k.user == user) })
	return nil
}

// SignOut drops the caller's own grant for a server each person signs in
// to, and their connection with it; the others' stay. Returns not_found,
// conflict for a server with one shared sign-in.
func (s *Service) SignOut(ctx context.Context, p domain.Principal, id string) (Server, error) {
	row, err := s.find(ctx, p, id)
	if err != nil {
		return Server{}, err
	}
	if !row.Config.PerPersonAuth {
		return Server{}, errs.E(errs.Conflict, "this MCP server has one shared sign-in, not one per person: its editor clears it (clear sign-in)")
	}
	if err := s.revokePersonal(ctx, row, p.User.ID); err != nil {
		return Server{}, err
	}
	return s.view(ctx, row, p.User.ID), nil
}
