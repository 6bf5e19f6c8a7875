package triggers_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/guardrails"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/tasks"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/core/triggers"
	"github.com/agents-server/agents-server/core/workflows"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// epoch is when every harness's clock starts: a Monday, 09:30 UTC.
var epoch = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)

// harness is the trigger service as workbench.Open wires it — what fires
// is started by the real task manager and run engine — on the porttest
// fakes, with a scripted model. Tests run in a synctest bubble so the
// runs a fire starts finish before a test looks.
type harness struct {
	t         *testing.T
	svc       *triggers.Service
	runs      *runs.Service
	llm       *porttest.LLM
	clock     *porttest.Clock
	ids       *porttest.IDs
	store     *porttest.TriggerStore
	users     *porttest.UserStore
	config    *porttest.ConfigStore
	sessStore *porttest.SessionStore
	runStore  *porttest.RunStore
	sessions  *sessions.Service
	workflows *workflows.Service
	settings  *settings.Service
	user      domain.Principal
	other     domain.Principal
	admin     domain.Principal
	agent     domain.Agent // the user's "helper"
	chat      domain.Session
}

// starter is what workbench.Open gives the trigger service.
type starter struct {
	*tasks.Manager
	*runs.Service
}

// bubble runs fn in a synctest bubble on a fresh harness; fn's t is the
// bubble's.
func bubble(t *testing.T, fn func(t *testing.T, h *harness)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) { fn(t, newHarness(t)) })
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	ctx := t.Context()
	// A sealing key, so a webhook's secret is stored sealed.
	box, err := secrets.NewBox([]byte(strings.Repeat("k", secrets.KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, llm: &porttest.LLM{}, clock: porttest.NewClock(epoch), ids: &porttest.IDs{}, store: &porttest.TriggerStore{},
		users: &porttest.UserStore{}, config: &porttest.ConfigStore{}}
	runStore := &porttest.RunStore{}
	h.runStore = runStore
	taskStore := &porttest.TaskStore{Runs: runStore}
	traces := &porttest.TraceStore{}
	h.sessStore = &porttest.SessionStore{Runs: runStore, Tasks: taskStore, Traces: traces, Triggers: h.store}
	taskStore.Sessions = h.sessStore
	h.settings = settings.New(&porttest.SettingStore{}, box, h.clock)
	provs, err := providers.New(providers.Deps{Store: h.config, Box: box, IDs: h.ids, Clock: h.clock})
	if err != nil {
		t.Fatal(err)
	}
	journal := sessions.NewJournal(sessions.Deps{Store: h.sessStore, Agents: h.config, Traces: traces, Runs: runStore, IDs: h.ids, Clock: h.clock})
	h.workflows = workflows.NewService(h.config, h.ids, h.clock)
	events := hub.New(hub.Options{}, h.clock, runStore, nil)
	log := slog.New(slog.DiscardHandler)
	mgr := tasks.New(tasks.Deps{Store: taskStore, Approvals: runStore, Sessions: journal, Config: h.config, Settings: h.settings,
		Workflows: h.workflows, Hub: events, IDs: h.ids, Clock: h.clock, Log: log})
	h.runs = runs.New(runs.Deps{Hub: events, Sessions: journal, Runs: runStore, Config: h.config, Settings: h.settings,
		Models: models.New(models.Deps{Config: h.config, Providers: provs, Settings: h.settings, Traces: traces, Sessions: journal,
			Slots: events, LLM: h.llm, Clock: h.clock}),
		Guardrails: guardrails.New(h.config, h.ids, h.clock), Traces: traces, Approvals: runStore, Tasks: mgr, Listeners: []runs.Listener{mgr},
		Toolsets: []tools.Toolset{mgr.Verbs()}, LLM: h.llm,
		IDs: h.ids, Clock: h.clock, Log: log, Replica: h.ids.NewID()})
	mgr.AttachEngine(h.runs)
	h.sessions = sessions.New(journal, mgr)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		h.runs.Shutdown(ctx)
	})
	h.svc = triggers.New(triggers.Deps{Store: h.store, Users: h.users, Config: h.config, Sessions: h.sessions, Workflows: h.workflows,
		Starter: starter{mgr, h.runs}, Box: box, IDs: h.ids, Clock: h.clock, Location: time.UTC, Log: log,
		Deliveries: &porttest.HookDeliveryStore{}})
	for _, p := range []*domain.Principal{&h.user, &h.other, &h.admin} {
		*p = domain.Principal{User: domain.User{ID: h.ids.NewID(), Role: domain.RoleMember, CreatedAt: epoch}}
	}
	h.user.User.Username, h.other.User.Username, h.admin.User.Username, h.admin.User.Role = "ada", "bob", "root", domain.RoleAdmin
	for _, p := range []domain.Principal{h.user, h.other, h.admin} {
		if err := h.users.CreateUser(ctx, p.User); err != nil {
			t.Fatal(err)
		}
	}
	prov, err := provs.Create(ctx, h.user, domain.ScopePrivate, providers.Input{Name: "fake", Type: "openai", APIKey: "sk-fake"})
	if err != nil {
		t.Fatal(err)
	}
	h.agent = domain.Agent{ID: h.ids.NewID(), Ownership: domain.Ownership{Scope: domain.ScopePrivate, OwnerID: h.user.User.ID},
		AgentSpec: domain.AgentSpec{Name: "helper", Model: "m", ProviderID: prov.ID}, CreatedAt: epoch, UpdatedAt: epoch}
	if err := h.config.InConfigTx(ctx, func(tx ports.ConfigTx) error { return tx.InsertAgent(ctx, h.agent) }); err != nil {
		t.Fatal(err)
	}
	if h.chat, err = h.sessions.Create(ctx, h.user, "inbox", h.agent.ID); err != nil {
		t.Fatal(err)
	}
	// A turn told to hold on keeps its conversation busy until the end;
	// every other run answers at once.
	h.llm.Route(func(r ports.ModelRequest) bool { return lastUserText(r) == holdOn }, porttest.Reply{Block: true})
	h.llm.Route(func(ports.ModelRequest) bool { return true }, porttest.Reply{Text: "on it"})
	return h
}

// holdOn in a turn's input keeps its run going until the test ends.
const holdOn = "hold on"

// busy starts a person's turn on the chat that keeps it busy; it returns
// the run.
func (h *harness) busy() domain.Run {
	h.t.Helper()
	r, err := h.runs.Start(h.t.Context(), h.user, h.chat.ID, runs.StartRequest{Input: holdOn})
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// agentSpec is a trigger of kind on the helper, reporting into the chat.
func (h *harness) agentSpec(kind domain.TriggerKind, schedule string) triggers.Spec {
	return triggers.Spec{Name: "nightly", Kind: kind, Schedule: schedule, Target: domain.TargetAgent, AgentConfigID: h.agent.ID,
		SessionID: h.chat.ID, Brief: "check the inbox"}
}

// create creates a trigger of the user's, returning it and its secret.
func (h *harness) create(spec triggers.Spec) (domain.Trigger, string) {
	h.t.Helper()
	tr, secret, err := h.svc.Create(h.t.Context(), h.user, spec)
	if err != nil {
		h.t.Fatalf("create: %v", err)
	}
	return tr, secret
}

// stored reads a trigger back.
func (h *harness) stored(id string) domain.Trigger {
	h.t.Helper()
	tr, err := h.store.FindTrigger(h.t.Context(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return tr
}

// entries are a session's entries, oldest first.
func (h *harness) entries(sessionID string) []domain.Entry {
	h.t.Helper()
	out, err := h.sessStore.Entries(h.t.Context(), sessionID)
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// notes are the display kinds of a session's annotations, in order.
func (h *harness) notes(sessionID, kind string) []domain.Entry {
	var out []domain.Entry
	for _, e := range h.entries(sessionID) {
		if e.Kind == domain.KindAnnotation && e.Display != nil && e.Display.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func wantCode(t *testing.T, err error, code errs.Code) {
	t.Helper()
	if errs.CodeOf(err) != code {
		t.Fatalf("err = %v (%s), want %s", err, errs.CodeOf(err), code)
	}
}

// lastUserText is the text of a request's last user message: what the
// run it belongs to was started with.
func lastUserText(r ports.ModelRequest) string {
	for i := len(r.Input) - 1; i >= 0; i-- {
		if it := domain.ParseItem(r.Input[i]); it.Kind() == "message" && it.Role == "user" {
			return it.Text()
		}
	}
	return ""
}
