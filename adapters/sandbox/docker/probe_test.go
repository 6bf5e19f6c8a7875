package docker

import (
	"context"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

func TestTestRunsEchoInThrowAwayContainer(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t)
	ctx := testContext(t)

	before := testContainers(t, rt)
	ok, out, err := rt.Test(ctx, dockerSandbox(testTarget()))
	if err != nil || !ok || out != "ok\n" {
		t.Fatalf("Test = %v, %q, %v; want true, ok", ok, out, err)
	}
	user := testTarget()
	user.User = "agent"
	if ok, out, err := rt.Test(ctx, dockerSandbox(user)); err != nil || !ok || out != "ok\n" {
		t.Errorf("Test as agent = %v, %q, %v", ok, out, err)
	}

	bad := testTarget()
	bad.User = "no-such-user"
	ok, out, err = rt.Test(ctx, dockerSandbox(bad))
	if err != nil || ok || !strings.Contains(out, "no-such-user") {
		t.Errorf("Test with a missing user = %v, %q, %v; want ok false naming the user", ok, out, err)
	}
	bad = testTarget()
	bad.Runtime = "no-such-runtime"
	if ok, out, err := rt.Test(ctx, dockerSandbox(bad)); err != nil || ok || out == "" {
		t.Errorf("Test with a missing runtime = %v, %q, %v; want ok false with the reason", ok, out, err)
	}
	if after := testContainers(t, rt); after != before {
		t.Errorf("test containers left behind: %d before, %d after", before, after)
	}
}

func TestTestErrorsWhenDaemonOrImageIsUnusable(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t)
	ctx := testContext(t)

	unreachable := testTarget()
	unreachable.Host = "tcp://127.0.0.1:1"
	if _, _, err := rt.Test(ctx, dockerSandbox(unreachable)); !errs.Is(err, errs.Upstream) {
		t.Errorf("Test on an unreachable daemon: %v, want upstream", err)
	}
	missing := testTarget()
	missing.Image = "localhost:1/agents-no-such-image:none"
	_, _, err := rt.Test(ctx, dockerSandbox(missing))
	if !errs.Is(err, errs.Upstream) || !strings.Contains(errs.MessageOf(err), "could not be pulled") {
		t.Errorf("Test with an unpullable image: %v, want upstream naming the pull", err)
	}
	in := newInstance(t, rt)
	configOf(in).Image = missing.Image
	if err := rt.Ensure(ctx, in); !errs.Is(err, errs.Upstream) {
		t.Errorf("Ensure with an unpullable image: %v, want upstream", err)
	}
	if _, err := rt.Containers(ctx, dockerSandbox(unreachable)); !errs.Is(err, errs.Upstream) {
		t.Errorf("Containers on an unreachable daemon: %v, want upstream", err)
	}
	if err := rt.Ensure(ctx, ports.ProjectInstance{ProjectID: "p", Name: "agents-x", StorageName: "agents-proj-x", Target: dockerSandbox(unreachable)}); !errs.Is(err, errs.Upstream) {
		t.Errorf("Ensure on an unreachable daemon: %v, want upstream", err)
	}
}

// testContainers counts the throw-away containers Test makes.
func testContainers(t *testing.T, rt *Runtime) int {
	t.Helper()
	d, _ := rt.daemonFor(mustTarget(t, dockerSandbox(testTarget())))
	res, err := d.api.ContainerList(context.Background(), client.ContainerListOptions{
		All: true, Filters: make(client.Filters).Add("label", labelTest+"="+rt.probeID),
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(res.Items)
}
