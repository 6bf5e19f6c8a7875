package workbench_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/workbench"
)

// fastPasswords keeps argon2id cheap in tests.
var fastPasswords = workbench.PasswordParams{MemoryKiB: 64, Time: 1, Threads: 1}

// noteArgs are save_note's arguments: the schema the model sees is
// derived from this struct.
type noteArgs struct {
	Title string   `json:"title" jsonschema:"a short title for the note"`
	Text  string   `json:"text" jsonschema:"the note itself"`
	Tags  []string `json:"tags,omitempty" jsonschema:"words to find the note by"`
}

// notebook is the program's state the tool changes.
type notebook struct {
	mu    sync.Mutex
	notes []noteArgs
	calls []workbench.Call
}

func (n *notebook) tool(t *testing.T) workbench.Tool {
	t.Helper()
	tool, err := workbench.NewTool("save_note", "Save a note in the program's notebook.",
		func(ctx context.Context, call workbench.Call, args noteArgs) (string, error) {
			n.mu.Lock()
			defer n.mu.Unlock()
			n.notes = append(n.notes, args)
			n.calls = append(n.calls, call)
			return "saved note " + args.Title, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// fixture is an open workbench with the notebook tool and the desk model,
// and an agent that must ask before saving a note.
type fixture struct {
	wb      *workbench.Workbench
	p       workbench.Principal
	book    *notebook
	model   *deskModel
	agentID string
}

func open(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{book: &notebook{}, model: &deskModel{}}
	wb, err := workbench.Open(ctx, workbench.Options{DataDir: t.TempDir(), PasswordParams: fastPasswords,
		Tools: []workbench.Tool{f.book.tool(t)}, Models: []workbench.Model{{Name: "desk", LLM: f.model}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := wb.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	f.wb = wb
	if f.p, err = wb.Admin(ctx); err != nil {
		t.Fatal(err)
	}
	prov, err := wb.Providers().Create(ctx, f.p, domain.ScopePrivate, providers.Input{Name: "Desk", Type: "desk"})
	if err != nil {
		t.Fatalf("a provider of the Go model's type: %v", err)
	}
	agent, err := wb.Agents().Create(ctx, f.p, domain.ScopePrivate, domain.AgentSpec{Name: "Clerk", Model: "desk-1",
		ProviderID: prov.ID, Tools: []string{"save_note"}, Approval: domain.AgentApproval{ApproveTools: []string{"save_note"}}})
	if err != nil {
		t.Fatalf("an agent given the Go tool: %v", err)
	}
	f.agentID = agent.ID
	return f
}

// converse sends input on a new session and follows the run to its end,
// deciding every approval with approve. It returns the session, the
// run's final text and the events seen.
func (f *fixture) converse(t *testing.T, input string, approve bool) (string, string, []domain.Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := f.wb.Sessions().Create(ctx, f.p, "notes", f.agentID)
	if err != nil {
		t.Fatal(err)
	}
	run, err := f.wb.Runs().Start(ctx, f.p, sess.ID, runs.StartRequest{Input: input})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := f.wb.Runs().Subscribe(ctx, f.p, run.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var seen []domain.Event
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("after %d events: %v", len(seen), err)
		}
		seen = append(seen, ev)
		switch ev.Type {
		case domain.EventInterrupted:
			waiting, err := f.wb.Runs().Approvals(ctx, f.p, sess.ID)
			if err != nil || len(waiting) != 1 {
				t.Fatalf("approvals waiting: %v %v", waiting, err)
			}
			if waiting[0].ToolName != "save_note" {
				t.Fatalf("the approval is for %q", waiting[0].ToolName)
			}
			if _, err := f.wb.Runs().Decide(ctx, f.p, waiting[0].ID, approve, domain.ScopeOnce, "not now"); err != nil {
				t.Fatal(err)
			}
		case domain.EventOutput:
			var out domain.OutputPayload
			if err := json.Unmarshal(ev.Payload, &out); err != nil {
				t.Fatal(err)
			}
			return sess.ID, out.FinalOutput, seen
		case domain.EventError, domain.EventCancelled:
			t.Fatalf("the run ended %s: %s", ev.Type, ev.Payload)
		}
	}
}

// TestAGoToolsSchemaComesFromItsStruct: the schema the model is offered
// is derived from the argument struct — properties, descriptions, what is
// required — and the agent's tool listing shows it as the program's.
func TestAGoToolsSchemaComesFromItsStruct(t *testing.T) {
	f := open(t)
	var schema struct {
		Type                 string                    `json:"type"`
		Required             []string                  `json:"required"`
		AdditionalProperties any                       `json:"additionalProperties"`
		Properties           map[string]map[string]any `json:"properties"`
	}
	tool := f.book.tool(t)
	if err := json.Unmarshal(tool.Schema(), &schema); err != nil {
		t.Fatalf("%s: %v", tool.Schema(), err)
	}
	if schema.Type != "object" || !slices.Equal(schema.Required, []string{"title", "text"}) {
		t.Errorf("type %q, required %v; want object, [title text]", schema.Type, schema.Required)
	}
	if schema.Properties["title"]["type"] != "string" || schema.Properties["title"]["description"] != "a short title for the note" {
		t.Errorf("title: %v", schema.Properties["title"])
	}
	if !strings.Contains(fmt.Sprint(schema.Properties["tags"]["type"]), "array") { // a nil slice is null too
		t.Errorf("tags: %v", schema.Properties["tags"])
	}
	if schema.AdditionalProperties != false {
		t.Errorf("additionalProperties %v; want false", schema.AdditionalProperties)
	}
	listed, err := f.wb.Agents().Tools(context.Background(), f.p, f.agentID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range listed {
		if s.Name == "save_note" {
			found = true
			if s.Origin != "native" || string(s.Parameters) != string(tool.Schema()) {
				t.Errorf("listed as origin %q with %s", s.Origin, s.Parameters)
			}
		}
	}
	if !found {
		t.Errorf("the agent's tools do not list save_note: %v", listed)
	}
}

// TestAGoModelServesARunThatCallsAGoTool: a provider of the program's own
// type answers the run; the Go tool waits for the person's approval, runs
// once with the model's arguments, and its call is traced like any tool's.
func TestAGoModelServesARunThatCallsAGoTool(t *testing.T) {
	f := open(t)
	sessionID, output, seen := f.converse(t, "note that we need milk and eggs", true)
	if output != "Done: saved note groceries" {
		t.Errorf("output %q", output)
	}
	if !slices.Contains(f.model.toolsOffered(), "save_note") {
		t.Errorf("the model was offered %v", f.model.toolsOffered())
	}
	f.book.mu.Lock()
	notes, calls := f.book.notes, f.book.calls
	f.book.mu.Unlock()
	if len(notes) != 1 || notes[0].Title != "groceries" || notes[0].Text != "milk, eggs" {
		t.Fatalf("notes %+v", notes)
	}
	if c := calls[0]; c.SessionID != sessionID || c.AgentID != f.agentID || c.UserID != f.p.User.ID || c.CallID != "call_1" || c.RunID == "" {
		t.Errorf("the call says %+v", c)
	}
	if !slices.ContainsFunc(seen, func(e domain.Event) bool { return e.Type == domain.EventStep }) {
		t.Error("the Go model's text did not stream")
	}
	spans, err := f.wb.Traces().List(context.Background(), f.p, sessionID, false, ports.SpanPage{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var tool *domain.Span
	var generations int
	for i, s := range spans {
		switch s.Kind {
		case domain.SpanFunction:
			if s.Name == "save_note" {
				tool = &spans[i]
			}
		case domain.SpanGeneration:
			generations++
		}
	}
	if tool == nil {
		t.Fatalf("no function span for save_note among %d spans", len(spans))
	}
	if tool.Meta["tool"] != "save_note" || tool.Meta["is_error"] != false || !strings.Contains(string(tool.Data), "saved note groceries") ||
		!strings.Contains(string(tool.Data), "milk, eggs") {
		t.Errorf("the tool's span: meta %v data %s", tool.Meta, tool.Data)
	}
	if generations != 2 {
		t.Errorf("%d generation spans; want the Go model's 2 calls", generations)
	}
}

// TestARejectedGoToolDoesNotRun: the approval gate holds for Go tools.
func TestARejectedGoToolDoesNotRun(t *testing.T) {
	f := open(t)
	_, output, _ := f.converse(t, "note that we need milk", false)
	f.book.mu.Lock()
	defer f.book.mu.Unlock()
	if len(f.book.notes) != 0 {
		t.Fatalf("the rejected tool ran: %+v", f.book.notes)
	}
	if !strings.HasPrefix(output, "Done: ") || !strings.Contains(strings.ToLower(output), "reject") {
		t.Errorf("the model heard %q; want the rejection", output)
	}
}

// TestOpenOnTheCallersDatabase: a program's own *sql.DB holds the
// workbench, across a Close and a second Open, and stays the program's.
func TestOpenOnTheCallersDatabase(t *testing.T) {
	ctx := context.Background()
	mine, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	open := func() *workbench.Workbench {
		wb, err := workbench.Open(ctx, workbench.Options{DB: mine, PasswordParams: fastPasswords, AdminToken: "fixed-admin-token-0123456789"})
		if err != nil {
			t.Fatal(workbench.Describe(err))
		}
		return wb
	}
	wb := open()
	p, _ := wb.Admin(ctx)
	if _, err := wb.Providers().Create(ctx, p, domain.ScopePrivate, providers.Input{Name: "kept", BaseURL: "http://127.0.0.1:1/v1"}); err != nil {
		t.Fatal(err)
	}
	if err := wb.Close(); err != nil {
		t.Fatal(err)
	}
	wb = open()
	defer wb.Close()
	p, _ = wb.Admin(ctx)
	list, err := wb.Providers().List(ctx, p)
	if err != nil || len(list) != 1 || list[0].Name != "kept" {
		t.Fatalf("after reopening: %v %v", list, err)
	}
	if err := mine.PingContext(ctx); err != nil {
		t.Fatalf("the program's database after Close: %v", err)
	}
}

// TestAGoModelsProviderRefusesVendorKnobs: an agent on a provider of the
// program's own type is checked against that type — it takes none of the
// vendor-specific request features.
func TestAGoModelsProviderRefusesVendorKnobs(t *testing.T) {
	f := open(t)
	ctx := context.Background()
	agent, err := f.wb.Agents().Get(ctx, f.p, f.agentID)
	if err != nil {
		t.Fatal(err)
	}
	spec := agent.AgentSpec
	spec.ModelSettings.Verbosity = "low"
	_, err = f.wb.Agents().Update(ctx, f.p, f.agentID, spec)
	if !strings.Contains(workbench.Describe(err)+fmt.Sprint(err), "model_settings.verbosity") {
		t.Fatalf("verbosity on a Go model's provider: %v", err)
	}
}
