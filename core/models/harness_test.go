package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// fixture is a models.Service on the porttest fakes with its real
// collaborators — providers, settings, sessions and the hub's slots — and
// a scripted model.
type fixture struct {
	svc       *models.Service
	llm       *porttest.LLM
	clock     *porttest.Clock
	ids       *porttest.IDs
	config    *porttest.ConfigStore
	traces    *porttest.TraceStore
	settings  *settings.Service
	sessions  *sessions.Journal
	providers *providers.Service
	hub       *hub.Hub
	user      domain.Principal // owns the provider and the agents below
	other     domain.Principal // another member
	admin     domain.Principal
	provider  domain.Provider // the user's, named "p", key "sk-p"
}

// policies is an OutboundPolicies that lets each owner reach what its
// map says.
type policies map[string]domain.OutboundPolicy

func (p policies) For(_ context.Context, ownerID string) (domain.OutboundPolicy, error) {
	return p[ownerID], nil
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	box, err := secrets.NewBox(nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{llm: &porttest.LLM{}, clock: porttest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), ids: &porttest.IDs{},
		config: &porttest.ConfigStore{}, traces: &porttest.TraceStore{}}
	runStore := &porttest.RunStore{}
	f.settings = settings.New(&porttest.SettingStore{}, box, f.clock)
	if f.providers, err = providers.New(providers.Deps{Store: f.config, Box: box, IDs: f.ids, Clock: f.clock}); err != nil {
		t.Fatal(err)
	}
	f.sessions = sessions.NewJournal(sessions.Deps{Store: &porttest.SessionStore{Runs: runStore}, Agents: f.config, Traces: f.traces,
		Runs: runStore, IDs: f.ids, Clock: f.clock})
	f.hub = hub.New(hub.Options{}, f.clock, runStore, nil)
	f.user = domain.Principal{User: domain.User{ID: f.ids.NewID(), Username: "ada", Role: domain.RoleMember}}
	f.other = domain.Principal{User: domain.User{ID: f.ids.NewID(), Username: "bob", Role: domain.RoleMember}}
	f.admin = domain.Principal{User: domain.User{ID: f.ids.NewID(), Username: "root", Role: domain.RoleAdmin}}
	f.svc = models.New(models.Deps{Config: f.config, Providers: f.providers, Settings: f.settings,
		Outbound: policies{f.user.User.ID: {Open: true}}, Traces: f.traces, Sessions: f.sessions, Slots: f.hub,
		LLM: f.llm, Clock: f.clock})
	if f.provider, err = f.providers.Create(t.Context(), f.user, domain.ScopePrivate,
		providers.Input{Name: "p", Type: "openai", APIKey: "sk-p"}); err != nil {
		t.Fatal(err)
	}
	return f
}

// insertProvider stores a provider as it is, past the providers service's
// rules (a chatgpt_login one, signed in or not).
func (f *fixture) insertProvider(t *testing.T, pr domain.Provider) domain.Provider {
	t.Helper()
	pr.ID, pr.CreatedAt, pr.UpdatedAt = f.ids.NewID(), f.clock.Now(), f.clock.Now()
	if pr.Scope == "" {
		pr.Ownership = domain.Ownership{Scope: domain.ScopePrivate, OwnerID: f.user.User.ID}
	}
	if err := f.config.InConfigTx(t.Context(), func(tx ports.ConfigTx) error { return tx.InsertProvider(t.Context(), pr) }); err != nil {
		t.Fatal(err)
	}
	return pr
}

// endpoint resolves the fixture's provider as an agent named "a" would.
func (f *fixture) endpoint(t *testing.T) ports.ProviderEndpoint {
	t.Helper()
	ep, err := f.svc.Endpoint(t.Context(), f.provider.ID, "a")
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// agent stores an agent of the user's on the fixture's provider unless
// spec names another ("none": no provider), with model "m" unless set.
func (f *fixture) agent(t *testing.T, spec domain.AgentSpec) domain.Agent {
	t.Helper()
	a, err := f.config.SeedAgent(t.Context(), f.ids.NewID(), f.user.User.ID, f.provider.ID, spec, f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// session creates a session of the user's on agentID ("" for none) holding
// entries.
func (f *fixture) session(t *testing.T, agentID string, entries ...domain.Entry) domain.Session {
	t.Helper()
	s, err := f.sessions.Create(t.Context(), f.user, "s", agentID)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) > 0 {
		if _, err := f.sessions.Append(t.Context(), s.ID, entries); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// exchange is n question-and-answer pairs of a conversation, each some
// hundred characters long.
func exchange(n int) []domain.Entry {
	var out []domain.Entry
	for i := range n {
		q := "question " + string(rune('a'+i)) + " asked at some length so the transcript has substance to fold"
		out = append(out,
			domain.Entry{Kind: domain.KindItem, Source: domain.SourceUser, Item: domain.TextMessage("user", "input_text", q)},
			domain.Entry{Kind: domain.KindItem, Source: domain.SourceModel, Item: domain.AssistantMessage("", "answer "+string(rune('a'+i)))})
	}
	return out
}
