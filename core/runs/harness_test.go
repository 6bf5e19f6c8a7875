package runs_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/guardrails"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/recovery"
	"github.com/agents-server/agents-server/core/remote"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/core/sandboxes"
	"github.com/agents-server/agents-server/core/sandboxtools"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// wait bounds every wait for an event: a run that never gets there fails
// its test instead of hanging it.
const wait = 10 * time.Second

// harness is a runs.Service wired as cmd/agents-server/wire.go wires it —
// the real hub and the real sessions, providers, settings and guardrails
// services — on the porttest fakes, with a scripted model in place of the
// provider router. No HTTP, no SQLite.
type harness struct {
	t          *testing.T
	svc        *runs.Service
	away       atomic.Bool     // the session store's writes fail (cascade)
	refused    atomic.Int32    // the writes it refused meanwhile
	fenced     atomic.Bool     // the heartbeat went untaken too long (runs.Deps.Fenced)
	models     *models.Service // the models service the engine calls
	hub        *hub.Hub
	llm        *porttest.LLM
	clock      *porttest.Clock
	ids        *porttest.IDs
	runStore   *porttest.RunStore
	sessStore  *porttest.SessionStore
	config     *porttest.ConfigStore
	traces     *porttest.TraceStore
	settings   *settings.Service
	journal    *sessions.Journal
	sessions   *sessions.Service
	providers  *providers.Service
	guardrails *guardrails.Service
	sandboxes  *sandboxes.Service // nil until withProject
	toolsets   []tools.Toolset    // registered after the sandbox's, by newService
	listeners  []runs.Listener    // given to the engine by newService
	replica    string             // the engine's replica id
	peers      remote.Peers       // the engine's other replicas (nil: none)
	backend    *porttest.Sandbox  // the docker backend withProject wires
	user       domain.Principal   // the member who owns everything below
	other      domain.Principal   // another member
	admin      domain.Principal
	provider   domain.Provider // the user's provider, named "fake"
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	box, err := secrets.NewBox(nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, llm: &porttest.LLM{}, clock: porttest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), ids: &porttest.IDs{},
		runStore: &porttest.RunStore{}, config: &porttest.ConfigStore{}, traces: &porttest.TraceStore{}}
	h.sessStore = &porttest.SessionStore{Runs: h.runStore, Traces: h.traces}
	h.settings = settings.New(&porttest.SettingStore{}, box, h.clock)
	if h.providers, err = providers.New(providers.Deps{Store: h.config, Box: box, IDs: h.ids, Clock: h.clock}); err != nil {
		t.Fatal(err)
	}
	h.journal = sessions.NewJournal(sessions.Deps{Store: cascade{h.sessStore, h.runStore, h.traces, &h.away, &h.refused}, Agents: h.config, Traces: h.traces,
		Runs: h.runStore, IDs: h.ids, Clock: h.clock})
	h.guardrails = guardrails.New(h.config, h.ids, h.clock)
	h.newService()
	h.user = domain.Principal{User: domain.User{ID: h.ids.NewID(), Username: "ada", Role: domain.RoleMember}}
	h.other = domain.Principal{User: domain.User{ID: h.ids.NewID(), Username: "bob", Role: domain.RoleMember}}
	h.admin = domain.Principal{User: domain.User{ID: h.ids.NewID(), Username: "root", Role: domain.RoleAdmin}}
	h.provider = h.newProvider("fake")
	return h
}

// cascade deletes a session's runs, approvals and spans with it, as the
// real store's foreign keys do.
type cascade struct {
	*porttest.SessionStore
	runs   *porttest.RunStore
	traces *porttest.TraceStore
	// away, while set, fails every session write (counted in refused):
	// the database is down.
	away    *atomic.Bool
	refused *atomic.Int32
}

// WriteSession fails while the database is away.
func (c cascade) WriteSession(ctx context.Context, id string, fn func(tx ports.SessionTx) error) error {
	if c.away != nil && c.away.Load() {
		c.refused.Add(1)
		return errs.E(errs.Unavailable, "the database is not answering")
	}
	return c.SessionStore.WriteSession(ctx, id, fn)
}

// DeleteSession deletes the session, then what it holds in the other fakes.
func (c cascade) DeleteSession(ctx context.Context, id string) error {
	if err := c.SessionStore.DeleteSession(ctx, id); err != nil {
		return err
	}
	c.runs.ForgetSession(id)
	c.traces.ForgetSession(id)
	return nil
}

// newService starts the run engine afresh, as a new process (a replica of
// its own) would.
func (h *harness) newService() {
	h.hub = hub.New(hub.Options{}, h.clock, h.runStore, nil)
	h.replica = h.ids.NewID()
	h.models = models.New(models.Deps{Config: h.config, Providers: h.providers, Settings: h.settings, Traces: h.traces,
		Sessions: h.journal, Slots: h.hub, LLM: h.llm, Clock: h.clock})
	var toolsets []tools.Toolset
	if h.sandboxes != nil {
		toolsets = append(toolsets, sandboxtools.NewToolset(h.sandboxes))
	}
	toolsets = append(toolsets, h.toolsets...)
	svc := runs.New(runs.Deps{Hub: h.hub, Sessions: h.journal, Runs: h.runStore, Config: h.config, Models: h.models,
		Settings: h.settings, Guardrails: h.guardrails, Traces: h.traces, Approvals: h.runStore, Sandboxes: h.sandboxes,
		Toolsets: toolsets, Listeners: h.listeners, LLM: h.llm, IDs: h.ids, Clock: h.clock, Log: slog.New(slog.DiscardHandler),
		Replica: h.replica, Peers: h.peers, Fenced: h.fenced.Load})
	h.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		svc.Shutdown(ctx)
	})
	h.sessions = sessions.New(h.journal, svc) // a delete stops the session's runs first
	h.svc = svc
}

// sweep runs the restart's sweep (core/recovery) as the engine's replica,
// telling the engine's listeners.
func (h *harness) sweep(ctx context.Context) ([]domain.Run, error) {
	return recovery.New(recovery.Deps{Runs: h.runStore, Sessions: h.sessions, Traces: h.traces, Hub: h.hub, Listeners: h.listeners,
		Replica: h.replica, Clock: h.clock, IDs: h.ids, Log: slog.New(slog.DiscardHandler)}).RecoverOrphans(ctx, h.clock.Now(), true)
}

// withProject wires the sandboxes service — a docker backend whose every
// command is answered by commands — and gives the user a project on a
// sandbox with prompt; it returns the project's id.
func (h *harness) withProject(prompt string, commands func(ctx context.Context, req ports.ExecRequest) (int, error)) string {
	h.t.Helper()
	ctx := h.t.Context()
	box, err := secrets.NewBox(nil)
	if err != nil {
		h.t.Fatal(err)
	}
	h.backend = &porttest.Sandbox{Commands: func(ctx context.Context, _ ports.ProjectInstance, req ports.ExecRequest) (int, error) {
		return commands(ctx, req)
	}}
	h.sandboxes = sandboxes.New(sandboxes.Deps{Store: &porttest.ProjectStore{Sessions: h.sessStore}, Box: box, Settings: h.settings,
		Backends: map[string]ports.SandboxBackend{domain.SandboxDocker: h.backend}, IDs: h.ids, Clock: h.clock,
		Log: slog.New(slog.DiscardHandler)})
	h.newService()
	sb, err := h.sandboxes.CreateSandbox(ctx, h.admin, sandboxes.SandboxInput{Name: "box", Type: domain.SandboxDocker,
		Config: json.RawMessage(`{"image":"img:1"}`), Prompt: prompt})
	if err != nil {
		h.t.Fatal(err)
	}
	p, err := h.sandboxes.CreateProject(ctx, h.user, sandboxes.ProjectInput{Name: "proj", SandboxID: sb.ID})
	if err != nil {
		h.t.Fatal(err)
	}
	return p.ID
}

// newProvider adds a provider of the user's, with a key.
func (h *harness) newProvider(name string) domain.Provider {
	h.t.Helper()
	p, err := h.providers.Create(h.t.Context(), h.user, domain.ScopePrivate, providers.Input{Name: name, Type: "openai", APIKey: "sk-" + name})
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

// agent stores an agent of the user's: spec with a name, model "m" and the
// harness's provider unless it says otherwise (provider "none": none).
func (h *harness) agent(spec domain.AgentSpec) domain.Agent {
	h.t.Helper()
	a, err := h.config.SeedAgent(h.t.Context(), h.ids.NewID(), h.user.User.ID, h.provider.ID, spec, h.clock.Now())
	if err != nil {
		h.t.Fatal(err)
	}
	return a
}

// guardrail stores a guardrail.
func (h *harness) guardrail(g domain.Guardrail) {
	h.t.Helper()
	if _, err := h.guardrails.Create(h.t.Context(), h.admin, g); err != nil {
		h.t.Fatal(err)
	}
}

// session creates a named session (so no run titles it) on an agent.
func (h *harness) session(agentID string) domain.Session {
	h.t.Helper()
	s, err := h.sessions.Create(h.t.Context(), h.user, "test", agentID)
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// start starts a run with input on a session.
func (h *harness) start(sessionID, input string) domain.Run {
	h.t.Helper()
	r, err := h.svc.Start(h.t.Context(), h.user, sessionID, runs.StartRequest{Input: input})
	if err != nil {
		h.t.Fatalf("start: %v", err)
	}
	return r
}

// events reads a run's events after fromSeq until its stream ends or it
// pauses (run.interrupted is the last one then).
func (h *harness) events(runID string, fromSeq int64) []domain.Event {
	h.t.Helper()
	sub, err := h.svc.Subscribe(context.Background(), h.user, runID, fromSeq)
	if err != nil {
		h.t.Fatalf("subscribe: %v", err)
	}
	defer sub.Close()
	ctx, cancel := context.WithTimeout(h.t.Context(), wait)
	defer cancel()
	var out []domain.Event
	for {
		ev, err := sub.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			h.t.Fatalf("run %s: %v after %s", runID, err, story(out))
		}
		out = append(out, ev)
		if ev.Type == domain.EventInterrupted {
			return out
		}
	}
}

// run stores an agent of spec, queues replies, starts a run with input on
// a new session and reads its events to the end (or the pause).
func (h *harness) run(spec domain.AgentSpec, input string, replies ...porttest.Reply) (domain.Run, []domain.Event) {
	h.t.Helper()
	a := h.agent(spec)
	h.llm.Queue(replies...)
	r := h.start(h.session(a.ID).ID, input)
	return r, h.events(r.ID, 0)
}

// row is a run's stored row.
func (h *harness) row(runID string) domain.Run {
	h.t.Helper()
	r, err := h.runStore.FindRun(h.t.Context(), runID)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// entries are every entry of a session, oldest first.
func (h *harness) entries(sessionID string) []domain.Entry {
	h.t.Helper()
	out, err := h.sessStore.Entries(h.t.Context(), sessionID)
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// spans are a run's stored spans of one kind.
func (h *harness) spans(runID, kind string) []domain.Span {
	var out []domain.Span
	for _, s := range h.traces.Spans() {
		if s.RunID == runID && s.Kind == kind {
			out = append(out, s)
		}
	}
	return out
}

// story is the sequence of event types, without trace spans and deltas:
// what a run did, in order.
func story(events []domain.Event) string {
	var out []string
	for _, ev := range events {
		if ev.Type != domain.EventTraceSpan && ev.Type != domain.EventStep && ev.Type != domain.EventReasoning {
			out = append(out, ev.Type)
		}
	}
	return strings.Join(out, " ")
}

// ofType are the events of one type.
func ofType(events []domain.Event, typ string) []domain.Event {
	var out []domain.Event
	for _, ev := range events {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func last(events []domain.Event) domain.Event {
	if len(events) == 0 {
		return domain.Event{}
	}
	return events[len(events)-1]
}

// payload decodes an event's payload.
func payload[T any](t *testing.T, ev domain.Event) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(ev.Payload, &v); err != nil {
		t.Fatalf("%s payload %s: %v", ev.Type, ev.Payload, err)
	}
	return v
}

// ending is how a run's stream ended: the final event's type and its code
// (an error's code, a cancellation's reason) or final output.
func ending(t *testing.T, events []domain.Event) string {
	t.Helper()
	ev := last(events)
	switch ev.Type {
	case domain.EventError:
		p := payload[domain.ErrorPayload](t, ev)
		return ev.Type + " " + p.Code
	case domain.EventCancelled:
		return ev.Type + " " + payload[domain.CancelledPayload](t, ev).Reason
	case domain.EventOutput:
		return ev.Type + " " + payload[domain.OutputPayload](t, ev).FinalOutput
	}
	return ev.Type
}

// describe renders entries compactly — kind/source: text — for failure
// messages and for asserting on what a run recorded.
func describe(entries []domain.Entry) []string {
	var out []string
	for _, e := range entries {
		s := e.Kind + "/" + e.Source
		switch {
		case e.Kind == domain.KindAnnotation:
			s += ": " + e.Text
		case len(e.Item) > 0:
			it := domain.ParseItem(e.Item)
			switch it.Kind() {
			case "message":
				s += " message: " + it.Text()
			case "function_call":
				s += " call " + it.Name
			case "function_call_output":
				s += " output: " + it.OutputText()
			default:
				s += " " + it.Kind()
			}
		}
		out = append(out, s)
	}
	return out
}

// hasEntry reports whether any entry's description contains want.
func hasEntry(entries []domain.Entry, want string) bool {
	return slices.ContainsFunc(describe(entries), func(s string) bool { return strings.Contains(s, want) })
}

// wantCode fails unless err carries code.
func wantCode(t *testing.T, err error, code errs.Code) {
	t.Helper()
	if errs.CodeOf(err) != code {
		t.Fatalf("err = %v (%s), want %s", err, errs.CodeOf(err), code)
	}
}

// call is a scripted function call.
func call(name, args string) porttest.Call { return porttest.Call{Name: name, Arguments: args} }

// todo is a todo_write call's arguments.
func todo(items ...string) string {
	var todos []map[string]string
	for _, it := range items {
		todos = append(todos, map[string]string{"content": it, "status": "pending"})
	}
	b, _ := json.Marshal(map[string]any{"todos": todos})
	return string(b)
}

// isTitle picks a session's title call.
func isTitle(r ports.ModelRequest) bool {
	return strings.HasPrefix(porttest.InputText(r), models.TitlePrefix)
}

// conversation leaves the title calls out of the model's requests.
func conversation(reqs []ports.ModelRequest) []ports.ModelRequest {
	return slices.DeleteFunc(reqs, isTitle)
}

func ptr[T any](v T) *T { return &v }
