package sessions_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

var (
	admin = domain.Principal{User: domain.User{ID: "admin", Role: domain.RoleAdmin}}
	ann   = domain.Principal{User: domain.User{ID: "ann", Role: domain.RoleMember}}
	bob   = domain.Principal{User: domain.User{ID: "bob", Role: domain.RoleMember}}
	t0    = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
)

// fixture is a sessions.Service over in-memory fakes.
type fixture struct {
	svc    *sessions.Service
	store  *porttest.SessionStore
	config *porttest.ConfigStore
	traces *porttest.TraceStore
	runs   *porttest.RunStore
	clock  *porttest.Clock
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{store: &porttest.SessionStore{}, config: &porttest.ConfigStore{}, traces: &porttest.TraceStore{},
		runs: &porttest.RunStore{}, clock: porttest.NewClock(t0)}
	f.store.Runs = f.runs
	f.svc = sessions.New(sessions.NewJournal(sessions.Deps{Store: f.store, Agents: f.config, Traces: f.traces, Runs: f.runs, IDs: &porttest.IDs{},
		Clock: f.clock}), nil)
	return f
}

// agent stores an agent and returns its id.
func (f *fixture) agent(t *testing.T, id string, scope domain.Scope, owner string, window int) string {
	t.Helper()
	a := domain.Agent{ID: id, Ownership: domain.Ownership{Scope: scope, OwnerID: owner},
		AgentSpec: domain.AgentSpec{Name: id, Model: "m", ContextWindow: window}, CreatedAt: t0, UpdatedAt: t0}
	if err := f.config.InConfigTx(context.Background(), func(tx ports.ConfigTx) error { return tx.InsertAgent(context.Background(), a) }); err != nil {
		t.Fatal(err)
	}
	return id
}

// session creates a session of p's or fails the test.
func (f *fixture) session(t *testing.T, p domain.Principal, name string) domain.Session {
	t.Helper()
	s, err := f.svc.Create(context.Background(), p, name, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// appendAll appends entries or fails the test.
func (f *fixture) appendAll(t *testing.T, sessionID string, entries ...domain.Entry) []domain.Entry {
	t.Helper()
	out, err := f.svc.Append(context.Background(), sessionID, entries)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// beginRun starts run id on the session with agent (and plan, when set)
// or fails the test; it returns the planning phase the run works in.
func (f *fixture) beginRun(t *testing.T, sessionID, id, agent string, plan *bool, entries ...domain.Entry) bool {
	t.Helper()
	planning, err := f.svc.BeginRun(context.Background(), f.run(sessionID, id, agent), plan, entries)
	if err != nil {
		t.Fatal(err)
	}
	return planning
}

// run is a running run of ann's on the session.
func (f *fixture) run(sessionID, id, agent string) domain.Run {
	return domain.Run{ID: id, SessionID: sessionID, OwnerID: ann.User.ID, AgentConfigID: agent, Status: domain.RunRunning,
		CreatedAt: f.clock.Now(), UpdatedAt: f.clock.Now()}
}

func userMsg(text, run string) domain.Entry {
	return domain.Entry{Kind: domain.KindItem, Source: domain.SourceUser, RunID: run, Item: domain.TextMessage("user", "input_text", text)}
}

func reply(text, run string, usage *domain.Usage) domain.Entry {
	return domain.Entry{Kind: domain.KindItem, Source: domain.SourceModel, RunID: run, Item: domain.AssistantMessage("", text), Usage: usage}
}

func toolCall(callID, run string) domain.Entry {
	return domain.Entry{Kind: domain.KindItem, Source: domain.SourceModel, RunID: run, Item: domain.FunctionCall("", callID, "t", "{}")}
}

func note(text string) domain.Entry {
	return domain.Entry{Kind: domain.KindAnnotation, Text: text}
}

func update(targetID, callID, title string) domain.Entry {
	return domain.Entry{Kind: domain.KindUpdate, TargetID: targetID, TargetCallID: callID, Display: &domain.Display{Title: title}}
}

// wantErr fails unless err has code and, when field is set, names it.
func wantErr(t *testing.T, err error, code errs.Code, field string) {
	t.Helper()
	if !errs.Is(err, code) {
		t.Fatalf("err = %v (%s), want %s", err, errs.CodeOf(err), code)
	}
	if field != "" {
		if _, ok := errs.FieldsOf(err)[field]; !ok {
			t.Fatalf("err %v names fields %v, not %s", err, errs.FieldsOf(err), field)
		}
	}
}

// title is the display title of a listed entry's (possibly folded) body.
func title(t *testing.T, l sessions.Listed) string {
	t.Helper()
	var e domain.Entry
	if err := json.Unmarshal(l.Body, &e); err != nil {
		t.Fatal(err)
	}
	if e.Display == nil {
		return ""
	}
	return e.Display.Title
}

func ids(list []sessions.Listed) []string {
	out := []string{}
	for _, l := range list {
		out = append(out, l.Meta.ID)
	}
	return out
}
