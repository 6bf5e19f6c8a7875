package outbound

import (
	"context"
	"net/netip"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

type settingsMap map[string]string

func (m settingsMap) Bool(_ context.Context, key string) (bool, error) { return m[key] == "true", nil }
func (m settingsMap) String(_ context.Context, key string) (string, error) {
	return m[key], nil
}

type usersMap map[string]domain.User

func (m usersMap) FindUserByID(_ context.Context, id string) (domain.User, error) {
	u, ok := m[id]
	if !ok {
		return domain.User{}, errs.E(errs.NotFound, "no user")
	}
	return u, nil
}

func TestAPolicyFollowsItsOwnerAndTheSettings(t *testing.T) {
	ctx := context.Background()
	users := usersMap{
		"adm":      {ID: "adm", Role: domain.RoleAdmin},
		"mem":      {ID: "mem", Role: domain.RoleMember},
		"disabled": {ID: "disabled", Role: domain.RoleAdmin, Disabled: true},
	}
	loop := netip.MustParseAddr("127.0.0.1")
	set := settingsMap{}
	p := New(set, users)
	for owner, open := range map[string]bool{"adm": true, "mem": false, "disabled": false, "gone": false, "": false} {
		got, err := p.For(ctx, owner)
		if err != nil || got.Open != open {
			t.Errorf("owner %q: %+v %v, want open %v", owner, got, err, open)
		}
	}
	if got, _ := p.ForCaller(ctx, domain.Principal{User: users["adm"]}); !got.Open {
		t.Error("an admin's own request is strict")
	}
	set[domain.OutboundAllowedHostsSetting] = "127.0.0.0/8, ollama.lan"
	got, _ := p.For(ctx, "mem")
	if got.Open || got.PermitsAddr(loop) != nil || !got.PermitsHost("ollama.lan") || got.PermitsAddr(netip.MustParseAddr("10.0.0.1")) == nil {
		t.Errorf("the allowlist: %+v", got)
	}
	set[domain.OutboundAllowPrivateSetting] = "true"
	if got, _ := p.For(ctx, "mem"); !got.Open {
		t.Error("outbound_allow_private did not open members' configurations")
	}
}
