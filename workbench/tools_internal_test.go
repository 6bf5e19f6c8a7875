package workbench

import (
	"context"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/tools"
)

// TestAToolsArgumentsAreCheckedBeforeItRuns: arguments that do not match
// the derived schema come back to the model as an error naming the
// problem, and the function never sees them.
func TestAToolsArgumentsAreCheckedBeforeItRuns(t *testing.T) {
	type args struct {
		City string `json:"city"`
		Days int    `json:"days,omitempty"`
	}
	ran := 0
	tool, err := NewTool("forecast", "A forecast.", func(_ context.Context, _ Call, a args) (string, error) {
		ran++
		return a.City, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`{}`, `{"city":3}`, `{"city":"Oslo","wind":true}`, `{"city":"Oslo","days":"two"}`, `not json`} {
		out, err := tool.native.Run(context.Background(), tools.Call{Arguments: bad})
		if err == nil || out != "" {
			t.Errorf("%s: %q, %v; want an error", bad, out, err)
		}
	}
	if ran != 0 {
		t.Fatalf("the function ran %d times on bad arguments", ran)
	}
	out, err := tool.native.Run(context.Background(), tools.Call{Arguments: `{"city":"Oslo","days":2}`})
	if err != nil || out != "Oslo" {
		t.Fatalf("good arguments: %q, %v", out, err)
	}
	if _, err := NewTool("bad", "Not a struct.", func(context.Context, Call, string) (string, error) { return "", nil }); err == nil ||
		!strings.Contains(err.Error(), "struct") {
		t.Errorf("a string argument type: %v", err)
	}
}

// TestOpenRefusesToolsAndModelsItCannotServe: a tool named like one of
// the workbench's own, two tools of one name, a model type that is
// built in: Open says which and opens nothing.
func TestOpenRefusesToolsAndModelsItCannotServe(t *testing.T) {
	noop := func(context.Context, Call, struct{}) (string, error) { return "", nil }
	cases := map[string]Options{
		"own tool":        {Tools: []Tool{MustTool("todo_write", "x", noop)}},
		"twice":           {Tools: []Tool{MustTool("a", "x", noop), MustTool("a", "y", noop)}},
		"mcp-like name":   {Tools: []Tool{MustTool("srv__tool", "x", noop)}},
		"built-in type":   {Models: []Model{{Name: "openai", LLM: modelRouter{}}}},
		"model of no LLM": {Models: []Model{{Name: "local"}}},
	}
	for name, o := range cases {
		o.DataDir = t.TempDir()
		o.PasswordParams = PasswordParams{MemoryKiB: 64, Time: 1, Threads: 1}
		wb, err := Open(context.Background(), o)
		if err == nil {
			wb.Close()
			t.Errorf("%s: opened", name)
			continue
		}
		if !strings.Contains(Describe(err), "Options.") {
			t.Errorf("%s: %s; want the option named", name, Describe(err))
		}
	}
}
