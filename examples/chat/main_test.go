package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/workbench"
)

// TestTheChatExampleCallsItsGoToolWhenAllowed runs the example as a person
// would: one note allowed, one refused, one plain question. The scripted
// model answers over real HTTP through the OpenAI SDK; the Go tool runs
// only for the yes.
func TestTheChatExampleCallsItsGoToolWhenAllowed(t *testing.T) {
	dir := t.TempDir()
	in := strings.NewReader("please note the shopping\ny\nplease note it again\nn\nhow are you\n\n")
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"--data-dir", dir}, in, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut.String(), out.String())
	}
	got := out.String()
	for _, want := range []string{
		`save_note wants to run with {"title":"shopping","text":"milk and eggs"}. Allow? [y/N]`,
		`[the tool answered: saved the note "shopping"]`,
		`[the tool answered: The person rejected this call; it did not run.`,
		"You said: how are you",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the chat lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "Allow? [y/N]"); n != 2 {
		t.Errorf("%d approval prompts; want 2", n)
	}
	notes, err := os.ReadFile(filepath.Join(dir, "notes.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(notes) != "## shopping\nmilk and eggs\n\n" {
		t.Errorf("the notebook holds %q; want the one allowed note", notes)
	}
}

// TestTheChatExampleReusesItsAgent: a second start on the same data dir
// brings the provider and agent up to date instead of adding more.
func TestTheChatExampleReusesItsAgent(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 2; i++ {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), []string{"--data-dir", dir}, strings.NewReader("hello\n\n"), &out, &errOut); code != 0 {
			t.Fatalf("start %d: exit %d: %s", i+1, code, errOut.String())
		}
	}
	wb, err := workbench.Open(context.Background(), workbench.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	me, _ := wb.Admin(context.Background())
	agents, _ := wb.Agents().List(context.Background(), me)
	provs, _ := wb.Providers().List(context.Background(), me)
	if len(agents) != 1 || len(provs) != 1 {
		t.Fatalf("%d agents and %d providers after two starts; want 1 each", len(agents), len(provs))
	}
}
