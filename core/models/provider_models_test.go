package models_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// listing is the fake model that counts the model lists it is asked for.
type listing struct {
	*porttest.LLM
	lists atomic.Int32
}

func (l *listing) Models(ctx context.Context, ep ports.ProviderEndpoint) ([]ports.ModelInfo, error) {
	l.lists.Add(1)
	return l.LLM.Models(ctx, ep)
}

func TestProviderModelsAreReusedUntilTheTTLOrAnEdit(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	box, err := secrets.NewBox(nil)
	if err != nil {
		t.Fatal(err)
	}
	clock, ids, config := porttest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), &porttest.IDs{}, &porttest.ConfigStore{}
	provs, err := providers.New(providers.Deps{Store: config, Box: box, IDs: ids, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	llm := &listing{LLM: &porttest.LLM{}}
	svc := models.New(models.Deps{Config: config, Providers: provs, Settings: settings.New(&porttest.SettingStore{}, box, clock),
		LLM: llm, Clock: clock})
	ada := domain.Principal{User: domain.User{ID: ids.NewID(), Username: "ada", Role: domain.RoleMember}}
	bob := domain.Principal{User: domain.User{ID: ids.NewID(), Username: "bob", Role: domain.RoleMember}}
	pr, err := provs.Create(ctx, ada, domain.ScopePrivate, providers.Input{Name: "p", Type: "openai", APIKey: "sk-1"})
	if err != nil {
		t.Fatal(err)
	}
	list := func(want int32) {
		t.Helper()
		got, err := svc.ProviderModels(ctx, ada, pr.ID)
		if err != nil || len(got) != 1 || got[0].ID != "fake" {
			t.Fatalf("models = %+v, %v", got, err)
		}
		if n := llm.lists.Load(); n != want {
			t.Fatalf("%d lists asked of the vendor, want %d", n, want)
		}
	}
	list(1)
	clock.Advance(30 * time.Second)
	list(1) // within the TTL: reused
	clock.Advance(31 * time.Second)
	list(2) // past it: asked again
	clock.Advance(time.Second)
	if _, err := provs.Update(ctx, ada, pr.ID, providers.Input{Name: "p", Type: "openai", APIKey: "sk-2"}); err != nil {
		t.Fatal(err)
	}
	list(3) // an edit (a new key) asks again
	// A test is never served from the cache.
	if tp, err := svc.TestProvider(ctx, ada, pr.ID); err != nil || !tp.OK || tp.Models != 1 || llm.lists.Load() != 4 {
		t.Fatalf("test = %+v, %v (%d lists)", tp, err, llm.lists.Load())
	}
	// Another member's private provider reads as absent, cached or not.
	if _, err := svc.ProviderModels(ctx, bob, pr.ID); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("another member: %v", err)
	}
}

// refusing is the fake model whose model lists fail with err.
type refusing struct {
	*porttest.LLM
	err error
}

func (r refusing) Models(context.Context, ports.ProviderEndpoint) ([]ports.ModelInfo, error) {
	return nil, r.err
}

func TestAFailedModelListSaysWhoIsAtFault(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	vendor := &ports.ModelError{Kind: ports.ModelAuth, Provider: "p", Status: 401, Message: "invalid api key"}
	// A refused dial comes wrapped in the model error the LLM adapters make
	// of it (adapters/llm/internal/transport.Refused).
	refusal := &ports.ModelError{Kind: ports.ModelInvalid, Provider: "p", Message: "the base URL refused",
		Err: &domain.OutboundRefusal{Addr: netip.MustParseAddr("10.0.0.1"), Class: "private"}}
	for _, c := range []struct {
		name       string
		err        error
		code       errs.Code
		says, kind string
	}{
		{name: "the vendor refuses", err: vendor, code: errs.Unavailable, says: "provider p: auth (HTTP 401): invalid api key", kind: "auth"},
		{name: "the outbound policy refuses", err: refusal, code: errs.Validation, says: "provider p: invalid_request: the base URL refused",
			kind: "invalid_request"},
		{name: "an uncoded failure", err: errors.New("dial tcp: boom"), code: errs.Unavailable, says: "internal server error"},
	} {
		svc := models.New(models.Deps{Config: f.config, Providers: f.providers, Settings: f.settings, LLM: refusing{f.llm, c.err},
			Clock: f.clock})
		got, err := svc.ProviderModels(ctx, f.user, f.provider.ID)
		if got != nil || errs.CodeOf(err) != c.code || errs.MessageOf(err) != c.says || !errors.Is(err, c.err) {
			t.Errorf("%s: models %+v, %v (%q); want %s saying %q", c.name, got, err, errs.MessageOf(err), c.code, c.says)
		}
		tp, err := svc.TestProvider(ctx, f.user, f.provider.ID)
		if err != nil || tp.OK || tp.Models != 0 || tp.Error != c.says || tp.Kind != c.kind {
			t.Errorf("%s: test = %+v, %v", c.name, tp, err)
		}
	}
	// A provider that cannot be called is refused before any call.
	signedOut := f.insertProvider(t, domain.Provider{Name: "gpt", Type: "openai", AuthMode: domain.AuthChatGPTLogin, API: "responses"})
	for _, call := range []func() error{
		func() error { _, err := f.svc.ProviderModels(ctx, f.user, signedOut.ID); return err },
		func() error { _, err := f.svc.TestProvider(ctx, f.user, signedOut.ID); return err },
	} {
		if err := call(); errs.CodeOf(err) != errs.Validation || !strings.Contains(errs.MessageOf(err), "not signed in") {
			t.Errorf("a signed-out provider: %v", err)
		}
	}
	if _, err := f.svc.TestProvider(ctx, f.other, f.provider.ID); errs.CodeOf(err) != errs.NotFound {
		t.Errorf("another member's provider: %v", err)
	}
}
