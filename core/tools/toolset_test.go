package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/tools"
)

// names lists an offer's tool names, in order.
func names(o tools.Offer) []string {
	var out []string
	for _, s := range o.Specs {
		out = append(out, s.Name)
	}
	return out
}

// TestBuiltinsOfferTheChecklistPlanAndTheSelectableToolsNamed holds that
// every agent gets todo_write and submit_plan, then the selectable tools
// its tools list names, in its order, and nothing for a name that is not
// selectable.
func TestBuiltinsOfferTheChecklistPlanAndTheSelectableToolsNamed(t *testing.T) {
	saved := tools.Selectable
	t.Cleanup(func() { tools.Selectable = saved })
	tools.Selectable = []tools.Spec{{Name: "web_search", Origin: tools.OriginBuiltin}, {Name: "clock", Origin: tools.OriginBuiltin}}

	for _, tc := range []struct {
		agent []string
		want  []string
	}{
		{nil, []string{"todo_write", "submit_plan"}},
		{[]string{"clock", "nope", "web_search"}, []string{"todo_write", "submit_plan", "clock", "web_search"}},
		{[]string{tools.ExecCommand}, []string{"todo_write", "submit_plan"}},
	} {
		o, err := tools.Builtins{}.Offer(context.Background(), tools.Request{Agent: domain.Agent{AgentSpec: domain.AgentSpec{Tools: tc.agent}}})
		if err != nil || !o.Selected || !slices.Equal(names(o), tc.want) {
			t.Errorf("tools %v: offer %v (selected %v), %v; want %v", tc.agent, names(o), o.Selected, err, tc.want)
		}
	}
}

// TestTodoWriteKeepsTheChecklistInItsAnswer holds todo_write's answer —
// the count of done items for the model, the list in the card — and its
// refusals of a malformed checklist, which the model reads as failed
// calls.
func TestTodoWriteKeepsTheChecklistInItsAnswer(t *testing.T) {
	call := func(args string) tools.Answer {
		return tools.Builtins{}.Call(context.Background(), tools.RunCall{}, domain.Item{Name: "todo_write", Arguments: args})
	}
	list := `[{"content":"read","status":"completed"},{"content":"write","status":"in_progress"},{"content":"ship","status":"pending"}]`
	a := call(`{"todos":` + list + `}`)
	if a.IsError || a.Output != "Checklist saved: 1 of 3 done." || a.Display == nil || a.Display.Kind != "todo" ||
		a.Display.Renderer != "todo" || a.Display.Summary != "1/3 done" {
		t.Fatalf("answer %+v (display %+v)", a, a.Display)
	}
	var kept []tools.Todo
	if err := json.Unmarshal([]byte(a.Display.Extra["todos"]), &kept); err != nil || len(kept) != 3 ||
		kept[0] != (tools.Todo{Content: "read", Status: tools.TodoCompleted}) || kept[2].Status != tools.TodoPending {
		t.Fatalf("the card's list %q: %v", a.Display.Extra["todos"], err)
	}
	if a := call(`{"todos":[]}`); a.IsError || a.Output != "Checklist saved: 0 of 0 done." {
		t.Fatalf("an empty checklist: %+v", a)
	}

	for _, tc := range []struct{ args, says string }{
		{`not json`, "todo_write takes"},
		{`{"todos":[],"extra":1}`, "todo_write takes"},
		{`{"todos":[{"content":"x","status":"done"}]}`, `status "done" is not pending`},
		{`{"todos":[{"content":"x"}]}`, `status "" is not pending`},
	} {
		if a := call(tc.args); !a.IsError || !strings.Contains(a.Output, tc.says) || a.Display != nil {
			t.Errorf("%s: %+v; want a failed call saying %q", tc.args, a, tc.says)
		}
	}
}

// TestBuiltinsAnswerOnlyTodoWrite holds that a call of another tool (the
// engine answers submit_plan itself) fails rather than passing for done.
func TestBuiltinsAnswerOnlyTodoWrite(t *testing.T) {
	a := tools.Builtins{}.Call(context.Background(), tools.RunCall{}, domain.Item{Name: "submit_plan", Arguments: `{"plan":"x"}`})
	if !a.IsError || a.Output != "Error: submit_plan is not answered here" {
		t.Fatalf("answer %+v", a)
	}
}

// TestNativesOfferTheNamedToolsAndCallThemWithTheRun holds that a
// program's tools are offered as the agent's tools list names them, and
// that a call hands the tool its run, session, agent and owner, and
// reports the tool's error to the model as a failed call.
func TestNativesOfferTheNamedToolsAndCallThemWithTheRun(t *testing.T) {
	var got tools.Call
	natives, err := tools.NewNatives([]tools.Native{
		{Spec: tools.Spec{Name: "lookup"}, Run: func(_ context.Context, c tools.Call) (string, error) {
			got = c
			return "found " + c.Arguments, nil
		}},
		{Spec: tools.Spec{Name: "fail"}, Run: func(context.Context, tools.Call) (string, error) {
			return "ignored", errors.New("no such thing")
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	o, err := natives.Offer(context.Background(), tools.Request{Agent: domain.Agent{AgentSpec: domain.AgentSpec{Tools: []string{"fail", "todo_write", "lookup", "other"}}}})
	if err != nil || !o.Selected || !slices.Equal(names(o), []string{"fail", "lookup"}) || o.Specs[0].Origin != tools.OriginNative {
		t.Fatalf("offer %v (%+v), %v", names(o), o, err)
	}
	if o, _ := natives.Offer(context.Background(), tools.Request{}); len(o.Specs) != 0 {
		t.Fatalf("an agent naming no tool got %v", names(o))
	}

	rc := tools.RunCall{Run: domain.Run{ID: "r1", SessionID: "s1", OwnerID: "u1"}, Agent: domain.Agent{ID: "ag1"}}
	a := natives.Call(context.Background(), rc, domain.Item{Name: "lookup", CallID: "c1", Arguments: `{"q":"x"}`})
	if a.IsError || a.Output != `found {"q":"x"}` {
		t.Fatalf("answer %+v", a)
	}
	if want := (tools.Call{CallID: "c1", Arguments: `{"q":"x"}`, RunID: "r1", SessionID: "s1", AgentID: "ag1", UserID: "u1"}); got != want {
		t.Fatalf("the tool was called with %+v; want %+v", got, want)
	}
	if a := natives.Call(context.Background(), rc, domain.Item{Name: "fail"}); !a.IsError || a.Output != "Error: no such thing" {
		t.Fatalf("a failing tool's answer %+v", a)
	}
}

// TestFailedAndConfigErrorSayWhatTheyAreGiven holds the two error forms a
// toolset reports.
func TestFailedAndConfigErrorSayWhatTheyAreGiven(t *testing.T) {
	if a := tools.Failed("Error: %s took %d", "x", 2); !a.IsError || a.Output != "Error: x took 2" || a.Display != nil {
		t.Fatalf("Failed = %+v", a)
	}
	var err error = &tools.ConfigError{Msg: "the agent names a missing skill"}
	var ce *tools.ConfigError
	if !errors.As(err, &ce) || err.Error() != "the agent names a missing skill" {
		t.Fatalf("ConfigError = %v", err)
	}
}
