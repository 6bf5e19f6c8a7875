// Command chat is a command-line conversation with an agent that has a Go
// tool: the workbench embedded in a program, on SQLite, with no server.
//
// The agent keeps notes with save_note, a Go function of this program;
// every call waits for your yes. With no flags the answers come from the
// scripted model, started in-process, so it runs with no API key:
//
//	go run ./examples/chat
//	> please note that we need milk
//
// Point it at a real OpenAI-compatible API to talk to a real model:
//
//	go run ./examples/chat --model-url https://api.openai.com/v1 --model gpt-5-mini --api-key "$OPENAI_API_KEY"
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/workbench"
	"github.com/agents-server/agents-server/workbench/scriptedmodel"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// noteArgs are save_note's arguments; the model is offered the JSON Schema
// derived from this struct.
type noteArgs struct {
	Title string `json:"title" jsonschema:"a few words naming the note"`
	Text  string `json:"text" jsonschema:"what to remember"`
}

// notebook is the program's own state: notes appended to a file.
type notebook struct {
	mu   sync.Mutex
	path string
}

// save is the Go tool's body.
func (n *notebook) save(_ context.Context, _ workbench.Call, a noteArgs) (string, error) {
	if strings.TrimSpace(a.Title) == "" {
		return "", errors.New("give the note a title")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	f, err := os.OpenFile(n.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "## %s\n%s\n\n", a.Title, a.Text); err != nil {
		return "", err
	}
	return fmt.Sprintf("saved the note %q", a.Title), nil
}

// run is main without the exit, so the example's test drives it.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", filepath.Join(os.TempDir(), "agents-chat-example"), "where the workbench keeps its SQLite database and the notes")
	modelURL := fs.String("model-url", "", "an OpenAI-compatible API's base URL (empty: the scripted model, in-process)")
	model := fs.String("model", "notes", "the model to ask")
	apiKey := fs.String("api-key", "", "the API's key")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *modelURL == "" {
		url, stop, err := startScriptedModel()
		if err != nil {
			fmt.Fprintln(stderr, "chat:", err)
			return 1
		}
		defer stop()
		*modelURL = url
	}

	book := &notebook{path: filepath.Join(*dataDir, "notes.md")}
	saveNote, err := workbench.NewTool("save_note", "Save a note in the person's notebook.", book.save)
	if err != nil {
		fmt.Fprintln(stderr, "chat:", err)
		return 1
	}
	wb, err := workbench.Open(ctx, workbench.Options{DataDir: *dataDir, Tools: []workbench.Tool{saveNote}})
	if err != nil {
		fmt.Fprintln(stderr, "chat:", workbench.Describe(err))
		return 1
	}
	defer wb.Close()

	c, err := newChat(ctx, wb, *modelURL, *model, *apiKey)
	if err != nil {
		fmt.Fprintln(stderr, "chat:", workbench.Describe(err))
		return 1
	}
	fmt.Fprintf(stdout, "Chatting with %s (%s at %s). Notes go to %s. An empty line ends.\n", c.agent.Name, *model, *modelURL, book.path)
	in := bufio.NewScanner(stdin)
	for {
		fmt.Fprint(stdout, "> ")
		if !in.Scan() || strings.TrimSpace(in.Text()) == "" {
			fmt.Fprintln(stdout)
			return 0
		}
		if err := c.turn(ctx, in.Text(), in, stdout); err != nil {
			fmt.Fprintln(stderr, "chat:", workbench.Describe(err))
			return 1
		}
	}
}

// chat is one conversation: the agent, its session, and who is talking.
type chat struct {
	wb      *workbench.Workbench
	me      workbench.Principal
	agent   domain.Agent
	session domain.Session
}

// newChat sets up the provider and the agent (save_note behind approval)
// — made on the first start, brought up to date on later ones — and a new
// session.
func newChat(ctx context.Context, wb *workbench.Workbench, url, model, key string) (*chat, error) {
	me, err := wb.Admin(ctx)
	if err != nil {
		return nil, err
	}
	prov, err := upsertProvider(ctx, wb, me, providers.Input{Name: "chat example", Type: "openai", API: "chat_completions", BaseURL: url, APIKey: key})
	if err != nil {
		return nil, err
	}
	agent, err := upsertAgent(ctx, wb, me, domain.AgentSpec{
		Name: "Notetaker", Model: model, ProviderID: prov.ID,
		Instructions: "You keep the person's notes. When they ask you to remember something, call save_note.",
		Tools:        []string{"save_note"},
		Approval:     domain.AgentApproval{ApproveTools: []string{"save_note"}},
	})
	if err != nil {
		return nil, err
	}
	sess, err := wb.Sessions().Create(ctx, me, "chat example", agent.ID)
	if err != nil {
		return nil, err
	}
	return &chat{wb: wb, me: me, agent: agent, session: sess}, nil
}

// upsertProvider updates the provider of that name, or adds it.
func upsertProvider(ctx context.Context, wb *workbench.Workbench, me workbench.Principal, in providers.Input) (domain.Provider, error) {
	list, err := wb.Providers().List(ctx, me)
	if err != nil {
		return domain.Provider{}, err
	}
	for _, p := range list {
		if p.Name == in.Name && p.OwnerID == me.User.ID {
			return wb.Providers().Update(ctx, me, p.ID, in)
		}
	}
	return wb.Providers().Create(ctx, me, domain.ScopePrivate, in)
}

// upsertAgent updates the agent of that name, or adds it.
func upsertAgent(ctx context.Context, wb *workbench.Workbench, me workbench.Principal, spec domain.AgentSpec) (domain.Agent, error) {
	list, err := wb.Agents().List(ctx, me)
	if err != nil {
		return domain.Agent{}, err
	}
	for _, a := range list {
		if a.Name == spec.Name && a.OwnerID == me.User.ID {
			return wb.Agents().Update(ctx, me, a.ID, spec)
		}
	}
	return wb.Agents().Create(ctx, me, domain.ScopePrivate, spec)
}

// turn sends one message and prints the run as it streams; a call that
// waits for approval asks on the terminal.
func (c *chat) turn(ctx context.Context, text string, in *bufio.Scanner, out io.Writer) error {
	r, err := c.wb.Runs().Start(ctx, c.me, c.session.ID, runs.StartRequest{Input: text})
	if err != nil {
		return err
	}
	events, err := c.wb.Runs().Subscribe(ctx, c.me, r.ID, 0)
	if err != nil {
		return err
	}
	defer events.Close()
	for {
		ev, err := events.Next(ctx)
		if err != nil {
			return err
		}
		switch ev.Type {
		case domain.EventStep:
			var d domain.DeltaPayload
			_ = json.Unmarshal(ev.Payload, &d)
			fmt.Fprint(out, d.Delta)
		case domain.EventToolResult:
			var res domain.ToolResultPayload
			_ = json.Unmarshal(ev.Payload, &res)
			fmt.Fprintf(out, "\n[the tool answered: %s]\n", res.Output)
		case domain.EventInterrupted:
			if err := c.askApprovals(ctx, in, out); err != nil {
				return err
			}
		case domain.EventOutput:
			fmt.Fprintln(out)
			return nil
		case domain.EventError:
			var e domain.ErrorPayload
			_ = json.Unmarshal(ev.Payload, &e)
			fmt.Fprintf(out, "\n(the run failed: %s)\n", e.Message)
			return nil
		case domain.EventCancelled:
			fmt.Fprintln(out, "\n(cancelled)")
			return nil
		}
	}
}

// askApprovals puts each waiting call to the person.
func (c *chat) askApprovals(ctx context.Context, in *bufio.Scanner, out io.Writer) error {
	waiting, err := c.wb.Runs().Approvals(ctx, c.me, c.session.ID)
	if err != nil {
		return err
	}
	for _, a := range waiting {
		fmt.Fprintf(out, "\n%s wants to run with %s. Allow? [y/N] ", a.ToolName, a.Arguments)
		yes := in.Scan() && strings.EqualFold(strings.TrimSpace(in.Text()), "y")
		if _, err := c.wb.Runs().Decide(ctx, c.me, a.ID, yes, domain.ScopeOnce, "the person said no"); err != nil {
			return err
		}
	}
	return nil
}

// startScriptedModel serves the scripted model on a free local port: the
// "notes" model calls save_note when asked to note something and answers
// anything else with its words.
func startScriptedModel() (string, func(), error) {
	srv := scriptedmodel.New(scriptedmodel.Options{})
	srv.SetScript("notes", scriptedmodel.Script{Exchanges: []scriptedmodel.Exchange{
		{When: "note", Steps: []scriptedmodel.Step{
			{Text: "I'll write that down. ", ToolCalls: []scriptedmodel.ToolCall{{Name: "save_note",
				Arguments: `{"title":"shopping","text":"milk and eggs"}`}}},
			{Text: "That is what the notebook said."},
		}},
		{Steps: []scriptedmodel.Step{{EchoInput: true}}},
	}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	return "http://" + ln.Addr().String() + "/v1", func() { hs.Close() }, nil
}
