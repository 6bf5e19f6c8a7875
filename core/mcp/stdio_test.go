package mcp

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// TestAProgramsStderrIsLoggedByLineAndItsTailKept: each line is logged
// once complete; the status keeps the last KB, cut at a line.
func TestAProgramsStderrIsLoggedByLineAndItsTailKept(t *testing.T) {
	var logged bytes.Buffer
	tail := newStderrTail(slog.New(slog.NewTextHandler(&logged, nil)), domain.MCPServer{ID: "s1", Name: "local"})
	_, _ = tail.Write([]byte("starting\npart"))
	_, _ = tail.Write([]byte("ial line\n"))
	if got := strings.Count(logged.String(), "mcp server stderr"); got != 2 || !strings.Contains(logged.String(), `line="partial line"`) {
		t.Fatalf("logged:\n%s", logged.String())
	}
	if tail.String() != "starting\npartial line" {
		t.Fatalf("tail = %q", tail.String())
	}
	for range 100 {
		_, _ = tail.Write([]byte(strings.Repeat("x", 30) + "\n"))
	}
	_, _ = tail.Write([]byte("fatal: the last words\n"))
	got := tail.String()
	first, _, _ := strings.Cut(got, "\n") // whole: the cut line was dropped
	if len(got) > tailBytes || !strings.HasSuffix(got, "fatal: the last words") || first != strings.Repeat("x", 30) || strings.Contains(got, "starting") {
		t.Fatalf("tail = %q", got)
	}
	err := withStderr(&ports.MCPError{Kind: ports.MCPUnreachable, Message: "could not connect"}, tail)
	var me *ports.MCPError
	if !errors.As(err, &me) || me.Kind != ports.MCPUnreachable || !strings.HasSuffix(me.Message, "its stderr ended: "+got) {
		t.Fatalf("err = %v", err)
	}
	if withStderr(errors.New("x"), nil).Error() != "x" {
		t.Fatal("no tail must leave the error as is")
	}
}
