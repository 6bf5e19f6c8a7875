package workbench_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/workbench"
)

// An Open that fails after the store is open (here in building the
// services: a Go model without an LLM) closes what it opened: the data
// dir's replica id is free again and the store opens, so the next Open on
// the same directory succeeds.
func TestAFailedOpenLeavesNothingOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	_, err := workbench.Open(ctx, workbench.Options{DataDir: dir, Models: []workbench.Model{{Name: "nobody"}}})
	if errs.CodeOf(err) != errs.Validation || !strings.Contains(errs.MessageOf(err), "Options.Models") {
		t.Fatalf("Open with a model without an LLM: %v", err)
	}
	wb, err := workbench.Open(ctx, workbench.Options{DataDir: dir})
	if err != nil {
		t.Fatalf("the next Open on the directory: %v", workbench.Describe(err))
	}
	// While it is open, the directory's replica id is its own.
	if _, err := workbench.Open(ctx, workbench.Options{DataDir: dir}); errs.CodeOf(err) != errs.Unavailable {
		t.Fatalf("a second Open on a directory in use: %v", err)
	}
	if err := wb.Close(); err != nil {
		t.Fatal(err)
	}
}
