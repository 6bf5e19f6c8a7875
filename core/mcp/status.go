package mcp

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
)

// live derives a server's status for a person — the one place it is
// computed — with its last error and its live tools; for a server each
// person signs in to, it is the person's own connection's. A row this
// replica is behind on — an enabled server it never dialed (created on
// another replica, or a person's grant not used here yet), or one waiting
// for a sign-in that another replica's callback has since completed (a
// grant it has not seen) — is dialed now, so every replica connects once
// any one of them signs the server in.
func (s *Service) live(ctx context.Context, row domain.MCPServer, user string) (domain.MCPStatus, string, []Tool) {
	grant, err := s.grantOf(ctx, row, user)
	if err != nil {
		s.d.Log.Warn("reading a person's MCP grant failed", "server", row.Name, "server_id", row.ID, "err", err)
		// The detail is in the log; people read what to do.
		return domain.MCPDisconnected, "your sign-in to this server could not be read just now: try again shortly", nil
	}
	return s.liveWith(row, user, grant)
}

// liveWith is live with the person's grant read already.
func (s *Service) liveWith(row domain.MCPServer, user, grant string) (domain.MCPStatus, string, []Tool) {
	k := keyFor(row, user)
	st, lastErr, tools, behind := s.liveNow(row, k, grant)
	if !behind {
		return st, lastErr, tools
	}
	s.d.Log.Info("mcp server changed on another replica or not used here yet: connecting", "server", row.Name, "server_id", row.ID)
	s.dialAgain(k, true)
	st, lastErr, tools, _ = s.liveNow(row, k, grant)
	return st, lastErr, tools
}

// liveNow is live without the catching up: it also reports whether this
// replica is behind the row.
func (s *Service) liveNow(row domain.MCPServer, k key, grant string) (_ domain.MCPStatus, _ string, _ []Tool, behind bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	up := row.Enabled && s.started && s.root.Err() == nil
	c := s.conns[k]
	if c == nil {
		// A person without a grant has nothing to dial with: they sign in.
		if up && (!row.Config.PerPersonAuth || (k.user != "" && grant != "")) {
			return domain.MCPConnecting, "", nil, true
		}
		c = &conn{}
	}
	if up && c.phase == idle && c.needsAuth && row.Config.AuthMode == domain.MCPAuthOAuth && grant != "" && grant != c.grant {
		return domain.MCPConnecting, "", nil, true
	}
	st, lastErr, tools := derive(row, c, grant)
	return st, lastErr, tools, false
}

// derive derives the status of row whose connection is c, with grant the
// sealed grant it goes through. s.mu is held.
func derive(row domain.MCPServer, c *conn, grant string) (domain.MCPStatus, string, []Tool) {
	switch {
	case !row.Enabled:
		return domain.MCPDisabled, "", nil
	case c.phase == authorizing:
		return domain.MCPAuthorizing, c.lastErr, nil
	case c.phase == connecting:
		return domain.MCPConnecting, c.lastErr, nil
	case c.phase == connected:
		return domain.MCPConnected, "", append([]Tool{}, c.tools...)
	case row.Config.AuthMode == domain.MCPAuthOAuth && (grant == "" || c.needsAuth):
		return domain.MCPNeedsAuth, c.lastErr, nil
	}
	return domain.MCPDisconnected, c.lastErr, nil
}
