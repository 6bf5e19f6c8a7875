// Package outbound decides the outbound policy of a configuration: what an
// admin owns reaches any address; what a member owns reaches public
// addresses, plus what the admin settings outbound_allow_private and
// outbound_allowed_hosts open. The rule itself is domain.OutboundPolicy;
// the clients that dial (internal/egress) enforce it.
package outbound

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// Settings is what the policy reads of the global settings.
type Settings interface {
	Bool(ctx context.Context, key string) (bool, error)
	String(ctx context.Context, key string) (string, error)
}

// Users finds a configuration's owner.
type Users interface {
	FindUserByID(ctx context.Context, id string) (domain.User, error)
}

// Policies resolves configurations' outbound policies.
type Policies struct {
	settings Settings
	users    Users
}

// New returns Policies reading settings and users.
func New(settings Settings, users Users) *Policies {
	return &Policies{settings: settings, users: users}
}

// For returns the policy of what ownerID configured, judged now: an active
// admin's is open; anyone else's (a member, a disabled or deleted account,
// an admin since demoted) is strict, opened as far as the settings say.
// Returns the store's errors.
func (p *Policies) For(ctx context.Context, ownerID string) (domain.OutboundPolicy, error) {
	if ownerID != "" {
		u, err := p.users.FindUserByID(ctx, ownerID)
		switch {
		case err == nil && u.ActiveAdmin():
			return domain.OpenOutbound, nil
		case err != nil && !errs.Is(err, errs.NotFound):
			return domain.OutboundPolicy{}, err
		}
	}
	return p.Members(ctx)
}

// ForCaller returns the policy of what the caller asks for in person (a
// skill import): an admin's is open, a member's strict as settings say.
func (p *Policies) ForCaller(ctx context.Context, caller domain.Principal) (domain.OutboundPolicy, error) {
	if caller.IsAdmin() {
		return domain.OpenOutbound, nil
	}
	return p.Members(ctx)
}

// Members returns the policy of members' configurations: strict, opened by
// outbound_allow_private, widened by outbound_allowed_hosts.
func (p *Policies) Members(ctx context.Context) (domain.OutboundPolicy, error) {
	open, err := p.settings.Bool(ctx, domain.OutboundAllowPrivateSetting)
	if err != nil {
		return domain.OutboundPolicy{}, err
	}
	if open {
		return domain.OpenOutbound, nil
	}
	text, err := p.settings.String(ctx, domain.OutboundAllowedHostsSetting)
	if err != nil {
		return domain.OutboundPolicy{}, err
	}
	_, nets, hosts, err := domain.ParseOutboundAllowlist(text)
	if err != nil {
		// Stored before a stricter parser: what cannot be read opens nothing.
		return domain.OutboundPolicy{}, nil
	}
	return domain.OutboundPolicy{Nets: nets, Hosts: hosts}, nil
}
