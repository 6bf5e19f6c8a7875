package workbench_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/workbench"
)

// echoModel is the smallest Go model: it answers with the person's words.
type echoModel struct{}

func (echoModel) Generate(_ context.Context, req ports.ModelRequest, _ func(ports.ModelDelta)) (ports.ModelResponse, error) {
	var last struct {
		Content []struct{ Text string } `json:"content"`
	}
	_ = json.Unmarshal(req.Input[len(req.Input)-1], &last)
	msg, _ := json.Marshal(map[string]any{"type": "message", "role": "assistant",
		"content": []map[string]string{{"type": "output_text", "text": "Echo: " + last.Content[0].Text}}})
	return ports.ModelResponse{Output: []json.RawMessage{msg}}, nil
}

func (echoModel) Models(context.Context, ports.ProviderEndpoint) ([]ports.ModelInfo, error) {
	return []ports.ModelInfo{{ID: "echo"}}, nil
}

// Open a workbench whose provider type "local" is a Go model, and run one
// turn of a conversation through the services.
func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "workbench-example")
	defer os.RemoveAll(dir)
	wb, err := workbench.Open(ctx, workbench.Options{DataDir: dir,
		Models: []workbench.Model{{Name: "local", LLM: echoModel{}}}})
	if err != nil {
		log.Fatal(workbench.Describe(err))
	}
	defer wb.Close()

	me, _ := wb.Admin(ctx)
	prov, _ := wb.Providers().Create(ctx, me, domain.ScopePrivate, providers.Input{Name: "Local", Type: "local"})
	agent, _ := wb.Agents().Create(ctx, me, domain.ScopePrivate, domain.AgentSpec{Name: "Parrot", Model: "echo", ProviderID: prov.ID})
	sess, _ := wb.Sessions().Create(ctx, me, "hello", agent.ID)
	run, _ := wb.Runs().Start(ctx, me, sess.ID, runs.StartRequest{Input: "hello"})

	events, _ := wb.Runs().Subscribe(ctx, me, run.ID, 0)
	defer events.Close()
	for {
		ev, err := events.Next(ctx)
		if err != nil {
			log.Fatal(err)
		}
		if ev.Type == domain.EventOutput {
			var out domain.OutputPayload
			_ = json.Unmarshal(ev.Payload, &out)
			fmt.Println(out.FinalOutput)
			return
		}
	}
	// Output: Echo: hello
}

// A tool is a Go function with a typed argument struct; the JSON Schema
// the model sees is derived from the struct.
func ExampleNewTool() {
	type weatherArgs struct {
		City  string `json:"city" jsonschema:"the city to report on"`
		Units string `json:"units,omitempty" jsonschema:"metric or imperial"`
	}
	tool, err := workbench.NewTool("weather", "Today's weather in a city.",
		func(ctx context.Context, call workbench.Call, args weatherArgs) (string, error) {
			return "Sunny in " + args.City, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tool.Name())
	fmt.Println(string(tool.Schema()))
	// Output:
	// weather
	// {"type":"object","properties":{"city":{"type":"string","description":"the city to report on"},"units":{"type":"string","description":"metric or imperial"}},"required":["city"],"additionalProperties":false}
}

// Mount the workbench under /agents in a program's own server, behind the
// program's own sign-in.
func ExampleWorkbench_Handler() {
	dir, _ := os.MkdirTemp("", "workbench-example")
	defer os.RemoveAll(dir)
	wb, err := workbench.Open(context.Background(), workbench.Options{DataDir: dir})
	if err != nil {
		log.Fatal(workbench.Describe(err))
	}
	defer wb.Close()

	mux := http.NewServeMux()
	mux.Handle("/agents/", wb.Handler(workbench.MountOptions{
		Prefix: "/agents",
		SignIn: func(r *http.Request) (workbench.Identity, error) {
			// The program's own session: here, a header its proxy sets.
			if user := r.Header.Get("X-Signed-In-User"); user != "" {
				return workbench.Identity{Username: user}, nil
			}
			return workbench.Identity{}, errors.New("not signed in")
		},
	}))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, user := range []string{"", "grace"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/agents/api/v1/auth/me", nil)
		if user != "" {
			req.Header.Set("X-Signed-In-User", user)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		fmt.Println(resp.Status)
	}
	// Output:
	// 401 Unauthorized
	// 200 OK
}

// The facades act for a principal as the REST API would: after a turn, the
// session's transcript reads as the person saw it.
func ExampleSessions_Transcript() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "workbench-example")
	defer os.RemoveAll(dir)
	wb, err := workbench.Open(ctx, workbench.Options{DataDir: dir,
		Models: []workbench.Model{{Name: "local", LLM: echoModel{}}}})
	if err != nil {
		log.Fatal(workbench.Describe(err))
	}
	defer wb.Close()

	me, _ := wb.Principal(ctx, workbench.Identity{Username: "grace"})
	prov, _ := wb.Providers().Create(ctx, me, domain.ScopePrivate, providers.Input{Name: "Local", Type: "local"})
	agent, _ := wb.Agents().Create(ctx, me, domain.ScopePrivate, domain.AgentSpec{Name: "Parrot", Model: "echo", ProviderID: prov.ID})
	sess, _ := wb.Sessions().Create(ctx, me, "notes", agent.ID)
	run, _ := wb.Runs().Start(ctx, me, sess.ID, runs.StartRequest{Input: "remember the milk"})
	events, _ := wb.Runs().Subscribe(ctx, me, run.ID, 0)
	for { // the subscription ends with the run
		if _, err := events.Next(ctx); err != nil {
			break
		}
	}
	events.Close()

	lines, err := wb.Sessions().Transcript(ctx, me, sess.ID, 10)
	if err != nil {
		log.Fatal(workbench.Describe(err))
	}
	for _, l := range lines {
		fmt.Printf("%s: %s\n", l.Role, l.Text)
	}
	// Another person's principal sees no such session.
	other, _ := wb.Principal(ctx, workbench.Identity{Username: "alan"})
	_, err = wb.Sessions().Get(ctx, other, sess.ID)
	fmt.Println(workbench.Describe(err))
	// Output:
	// user: remember the milk
	// assistant: Echo: remember the milk
	// session not found
}
