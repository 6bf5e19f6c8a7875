package tasks_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
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
	"github.com/agents-server/agents-server/core/workflows"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// harness is the task manager wired to the run engine both ways, as
// workbench.Open wires them — the real hub, sessions, settings, providers,
// guardrails and workflows services — on the porttest fakes, with a
// scripted model. Every test runs in a synctest bubble: the runs a task
// starts are goroutines of the bubble, so synctest.Wait lets every one
// of them finish (or block on the model) before the test looks, and the
// task_status wait passes in no time.
type harness struct {
	t         *testing.T
	mgr       *tasks.Manager
	ends      *endHook // the manager as the engine's listener
	runs      *runs.Service
	hub       *hub.Hub
	llm       *porttest.LLM
	clock     *porttest.Clock
	ids       *porttest.IDs
	taskStore *porttest.TaskStore
	runStore  *porttest.RunStore
	sessStore *porttest.SessionStore
	config    *porttest.ConfigStore
	settings  *settings.Service
	sessions  *sessions.Service
	workflows *workflows.Service
	provider  domain.Provider
	user      domain.Principal // owns everything below
	other     domain.Principal
	admin     domain.Principal
	agent     domain.Agent // the user's agent, "helper"
}

// bubble runs fn in a synctest bubble on a fresh harness; fn's t is the
// bubble's (the outer test's must not be used inside it).
func bubble(t *testing.T, fn func(t *testing.T, h *harness)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) { fn(t, newHarness(t)) })
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	box, err := secrets.NewBox(nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, llm: &porttest.LLM{}, clock: porttest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), ids: &porttest.IDs{},
		runStore: &porttest.RunStore{}, config: &porttest.ConfigStore{}}
	h.taskStore = &porttest.TaskStore{Runs: h.runStore}
	traces := &porttest.TraceStore{}
	h.sessStore = &porttest.SessionStore{Runs: h.runStore, Tasks: h.taskStore, Traces: traces}
	h.taskStore.Sessions = h.sessStore
	h.settings = settings.New(&porttest.SettingStore{}, box, h.clock)
	provs, err := providers.New(providers.Deps{Store: h.config, Box: box, IDs: h.ids, Clock: h.clock})
	if err != nil {
		t.Fatal(err)
	}
	journal := sessions.NewJournal(sessions.Deps{Store: cascade{h.sessStore, h.runStore, h.taskStore}, Agents: h.config, Traces: traces, Runs: h.runStore,
		IDs: h.ids, Clock: h.clock})
	h.workflows = workflows.NewService(h.config, h.ids, h.clock)
	h.hub = hub.New(hub.Options{}, h.clock, h.runStore, nil)
	log := slog.New(slog.DiscardHandler)
	h.mgr = tasks.New(tasks.Deps{Store: h.taskStore, Approvals: h.runStore, Sessions: journal, Config: h.config, Settings: h.settings,
		Workflows: h.workflows, Hub: h.hub, IDs: h.ids, Clock: h.clock, Log: log})
	h.ends = &endHook{Manager: h.mgr}
	h.runs = runs.New(runs.Deps{Hub: h.hub, Sessions: journal, Runs: h.runStore, Config: h.config, Settings: h.settings,
		Models: models.New(models.Deps{Config: h.config, Providers: provs, Settings: h.settings, Traces: traces, Sessions: journal,
			Slots: h.hub, LLM: h.llm, Clock: h.clock}),
		Guardrails: guardrails.New(h.config, h.ids, h.clock), Traces: traces, Approvals: h.runStore, Tasks: h.mgr, Listeners: []runs.Listener{h.ends},
		Toolsets: []tools.Toolset{h.mgr.Verbs()}, LLM: h.llm,
		IDs: h.ids, Clock: h.clock, Log: log, Replica: h.ids.NewID()})
	h.mgr.AttachEngine(h.runs)
	h.sessions = sessions.New(journal, h.mgr)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		h.runs.Shutdown(ctx)
	})
	h.user = domain.Principal{User: domain.User{ID: h.ids.NewID(), Username: "ada", Role: domain.RoleMember}}
	h.other = domain.Principal{User: domain.User{ID: h.ids.NewID(), Username: "bob", Role: domain.RoleMember}}
	h.admin = domain.Principal{User: domain.User{ID: h.ids.NewID(), Username: "root", Role: domain.RoleAdmin}}
	h.provider, err = provs.Create(t.Context(), h.user, domain.ScopePrivate, providers.Input{Name: "fake", Type: "openai", APIKey: "sk-fake"})
	if err != nil {
		t.Fatal(err)
	}
	h.agent = h.newAgent(h.user, domain.AgentSpec{Name: "helper"})
	// A wake-up reads its results and says so.
	h.llm.Route(func(r ports.ModelRequest) bool { return strings.HasPrefix(lastUserText(r), tasks.NotificationPrefix) },
		porttest.Reply{Text: "noted"})
	return h
}

// endHook is the manager as the run engine's listener, deaf to runs'
// ends while deaf is set: the replica driving them died once a run's end
// was stored, before it acted on it.
type endHook struct {
	*tasks.Manager
	deaf atomic.Bool
}

// Ended implements runs.Listener.
func (e *endHook) Ended(run domain.Run) {
	if !e.deaf.Load() {
		e.Manager.Ended(run)
	}
}

// cascade deletes a session's runs, approvals, tasks and debts with it, as
// the real store's foreign keys do.
type cascade struct {
	*porttest.SessionStore
	runs  *porttest.RunStore
	tasks *porttest.TaskStore
}

// DeleteSession deletes the session, then what it holds in the other fakes.
func (c cascade) DeleteSession(ctx context.Context, id string) error {
	if err := c.SessionStore.DeleteSession(ctx, id); err != nil {
		return err
	}
	c.runs.ForgetSession(id)
	c.tasks.ForgetSession(id)
	return nil
}

// newAgent stores an agent of p's with model "m" on the harness's provider.
func (h *harness) newAgent(p domain.Principal, spec domain.AgentSpec) domain.Agent {
	h.t.Helper()
	spec.Model, spec.ProviderID = "m", h.provider.ID
	a := domain.Agent{ID: h.ids.NewID(), Ownership: domain.Ownership{Scope: domain.ScopePrivate, OwnerID: p.User.ID}, AgentSpec: spec,
		CreatedAt: h.clock.Now(), UpdatedAt: h.clock.Now()}
	if err := h.config.InConfigTx(h.t.Context(), func(tx ports.ConfigTx) error { return tx.InsertAgent(h.t.Context(), a) }); err != nil {
		h.t.Fatal(err)
	}
	return a
}

// session creates a named conversation of the user's on the helper.
func (h *harness) session() domain.Session {
	h.t.Helper()
	s, err := h.sessions.Create(h.t.Context(), h.user, "chat", h.agent.ID)
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// answer scripts the model's replies to every request whose last user
// message holds marker (in turn, the last repeating).
func (h *harness) answer(marker string, replies ...porttest.Reply) {
	h.llm.Route(func(r ports.ModelRequest) bool { return strings.Contains(lastUserText(r), marker) }, replies...)
}

// lastUserText is the text of a request's last user message: what the run
// it belongs to was started with (a step's turn, a retry's, a wake-up's).
func lastUserText(r ports.ModelRequest) string {
	for i := len(r.Input) - 1; i >= 0; i-- {
		if it := domain.ParseItem(r.Input[i]); it.Kind() == "message" && it.Role == "user" {
			return it.Text()
		}
	}
	return ""
}

// set changes a setting as an admin.
func (h *harness) set(key, value string) {
	h.t.Helper()
	if _, err := h.settings.Put(h.t.Context(), h.admin, key, value); err != nil {
		h.t.Fatal(err)
	}
}

// call is a task verb as a chat run of the user's on parent calls it.
func (h *harness) call(parent domain.Session, name, args string) tools.Answer {
	h.t.Helper()
	return h.callAs(parent, h.agent, "call-"+h.ids.NewID(), name, args)
}

func (h *harness) callAs(parent domain.Session, agent domain.Agent, callID, name, args string) tools.Answer {
	h.t.Helper()
	run := domain.Run{ID: "chat-run", SessionID: parent.ID, OwnerID: parent.OwnerID, AgentConfigID: agent.ID, Status: domain.RunRunning}
	return h.mgr.Call(h.t.Context(), tasks.VerbCall{Run: run, Agent: agent, CallID: callID, Name: name, Arguments: args})
}

// spawn spawns a task with prompt from parent and returns it as it stands
// once every run it set off has finished or blocked.
func (h *harness) spawn(parent domain.Session, prompt string) domain.Task {
	h.t.Helper()
	a := h.call(parent, tools.SpawnTask.Name, `{"prompt":"`+prompt+`"}`)
	if a.IsError {
		h.t.Fatalf("spawn_task: %s", a.Output)
	}
	synctest.Wait()
	return h.task(a.Display.Extra["task_id"])
}

// task reads a task.
func (h *harness) task(id string) domain.Task {
	h.t.Helper()
	t, err := h.taskStore.FindTask(h.t.Context(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return t
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

// wakeups are the runs on a session that read task results.
func (h *harness) wakeups(sessionID string) []domain.Entry {
	var out []domain.Entry
	for _, e := range h.entries(sessionID) {
		if e.Source == domain.SourceTaskNotification {
			out = append(out, e)
		}
	}
	return out
}

// cards are the spawn_task card updates written on a session.
func (h *harness) cards(sessionID string) []domain.Entry {
	var out []domain.Entry
	for _, e := range h.entries(sessionID) {
		if e.Kind == domain.KindUpdate && e.Display != nil && e.Display.Kind == "task" {
			out = append(out, e)
		}
	}
	return out
}

// due are a session's unsettled debts.
func (h *harness) due(sessionID string) []domain.TaskWakeup {
	h.t.Helper()
	w, err := h.taskStore.DueWakeups(h.t.Context(), sessionID)
	if err != nil {
		h.t.Fatal(err)
	}
	return w
}

// wantCode fails unless err carries code.
func wantCode(t *testing.T, err error, code errs.Code) {
	t.Helper()
	if errs.CodeOf(err) != code {
		t.Fatalf("err = %v (%s), want %s", err, errs.CodeOf(err), code)
	}
}

// inputs are the texts of a session's user messages, oldest first: what
// each run on it was started with.
func (h *harness) inputs(sessionID string) []string {
	var out []string
	for _, e := range h.entries(sessionID) {
		if e.Kind == domain.KindItem && len(e.Item) > 0 {
			if it := domain.ParseItem(e.Item); it.Kind() == "message" && it.Role == "user" {
				out = append(out, it.Text())
			}
		}
	}
	return out
}

// sessionOf creates a conversation of p's on an agent of theirs.
func (h *harness) sessionOf(p domain.Principal) domain.Session {
	h.t.Helper()
	s, err := h.sessions.Create(h.t.Context(), p, "theirs", h.newAgent(p, domain.AgentSpec{Name: "theirs"}).ID)
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// domainRun is a chat run on a session, as a verb's caller.
func domainRun(s domain.Session) domain.Run {
	return domain.Run{ID: "chat-run-" + s.ID, SessionID: s.ID, OwnerID: s.OwnerID, Status: domain.RunRunning}
}

// verbCall is a task verb naming one task, as run calls it.
func verbCall(run domain.Run, name, taskID string) tasks.VerbCall {
	return tasks.VerbCall{Run: run, CallID: "c", Name: name, Arguments: `{"task_id":"` + taskID + `"}`}
}

// runsInput is a chat turn's request.
func runsInput(text string) runs.StartRequest { return runs.StartRequest{Input: text} }
