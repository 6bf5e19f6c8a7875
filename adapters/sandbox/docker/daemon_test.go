package docker

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/internal/testenv"
	"github.com/agents-server/agents-server/ports"
)

// These suites run against a real Docker daemon: DOCKER_HOST (or the default
// socket) with the image built by scripts/docker/up.sh. Without one they
// skip, saying why — unless AGENTS_CI=1, where a missing daemon fails them.

const testImage = "agents-sandbox:test"

var (
	daemonOnce   sync.Once
	daemonReason string // why the daemon suites cannot run; "" when they can
)

func probeDaemon() string {
	api, err := client.New(client.FromEnv)
	if err != nil {
		return "docker client: " + err.Error()
	}
	defer api.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := api.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return "no docker daemon answers at " + api.DaemonHost() + ": " + err.Error()
	}
	if _, err := api.ImageInspect(ctx, testImage); err != nil {
		return "the daemon lacks the image " + testImage + ": " + err.Error()
	}
	return ""
}

// needDaemon skips (or, under AGENTS_CI=1, fails) a test without a daemon.
func needDaemon(t *testing.T) {
	t.Helper()
	daemonOnce.Do(func() { daemonReason = probeDaemon() })
	if daemonReason == "" {
		return
	}
	testenv.Require(t, "docker suite (sandbox adapter)", daemonReason, "go tool task docker:test")
}

// newRuntime returns a Runtime on the environment's daemon, closed at the end.
func newRuntime(t *testing.T) *Runtime {
	t.Helper()
	needDaemon(t)
	rt := New(Options{})
	t.Cleanup(func() { _ = rt.Close() })
	return rt
}

func testTarget() domain.DockerConfig {
	return domain.DockerConfig{Image: testImage, MemoryMB: 256, CPUs: 1}
}

// dockerSandbox is a docker sandbox target of the config (a copy).
func dockerSandbox(c domain.DockerConfig) ports.SandboxTarget {
	return ports.SandboxTarget{SandboxID: "sb-test", Type: domain.SandboxDocker, Config: &c}
}

// mustTarget is the adapter's reading of a target.
func mustTarget(t *testing.T, pt ports.SandboxTarget) dockerTarget {
	t.Helper()
	dt, err := targetOf(pt)
	if err != nil {
		t.Fatal(err)
	}
	return dt
}

// mustResolve is the adapter's reading of an instance.
func mustResolve(t *testing.T, rt *Runtime, in ports.ProjectInstance) dockerInstance {
	t.Helper()
	di, err := rt.resolve(in)
	if err != nil {
		t.Fatal(err)
	}
	return di
}

// configOf is an instance's docker config, to change in place.
func configOf(in ports.ProjectInstance) *domain.DockerConfig {
	return in.Target.Config.(*domain.DockerConfig)
}

// newInstance names a fresh instance with a random project id; it is
// destroyed when the test ends.
func newInstance(t *testing.T, rt *Runtime) ports.ProjectInstance {
	t.Helper()
	tail := randomHex(6)
	in := ports.ProjectInstance{
		ProjectID:   "proj-" + tail,
		Name:        "agents-t" + tail,
		StorageName: "agents-proj-t" + tail,
		Env:         map[string]string{},
		Target:      dockerSandbox(testTarget()),
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := rt.Destroy(ctx, in); err != nil {
			t.Errorf("cleanup: destroy %s: %v", in.Name, err)
		}
	})
	return in
}

func ensure(t *testing.T, rt *Runtime, in ports.ProjectInstance) {
	t.Helper()
	if err := rt.Ensure(testContext(t), in); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// run execs argv and returns the exit code, stdout and stderr.
func run(t *testing.T, rt *Runtime, in ports.ProjectInstance, req ports.ExecRequest, argv ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	req.Cmd, req.Stdout, req.Stderr = argv, &stdout, &stderr
	code, err := rt.Exec(testContext(t), in, req)
	if err != nil {
		t.Fatalf("Exec %q: %v", argv, err)
	}
	return code, stdout.String(), stderr.String()
}

// sh runs a shell snippet that must succeed and returns its trimmed stdout.
func sh(t *testing.T, rt *Runtime, in ports.ProjectInstance, script string) string {
	t.Helper()
	code, out, errOut := run(t, rt, in, ports.ExecRequest{}, "sh", "-c", script)
	if code != 0 {
		t.Fatalf("sh -c %q: exit %d, stderr %q", script, code, errOut)
	}
	return strings.TrimSpace(out)
}

// inspect returns the daemon's view of the instance's container.
func inspect(t *testing.T, rt *Runtime, in ports.ProjectInstance) client.ContainerInspectResult {
	t.Helper()
	d, err := rt.daemonFor(mustTarget(t, in.Target))
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.api.ContainerInspect(testContext(t), in.Name, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatalf("inspect %s: %v", in.Name, err)
	}
	return res
}

func wantState(t *testing.T, rt *Runtime, in ports.ProjectInstance, want ports.SandboxState) {
	t.Helper()
	got, err := rt.State(testContext(t), in)
	if err != nil {
		t.Fatalf("State: %v", err)
	}
	if got != want {
		t.Fatalf("State = %s, want %s", got, want)
	}
}
