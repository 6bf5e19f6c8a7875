package docker

import (
	"context"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

func TestEnsureCreatesVolumeAndContainerOnce(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t)
	in := newInstance(t, rt)
	configOf(in).MemoryMB = 0 // the 4096 MiB default
	configOf(in).CPUs = 0     // the 2-CPU default

	wantState(t, rt, in, ports.SandboxAbsent)
	ensure(t, rt, in)
	wantState(t, rt, in, ports.SandboxRunning)
	first := inspect(t, rt, in).Container

	ensure(t, rt, in)
	if again := inspect(t, rt, in).Container; again.ID != first.ID {
		t.Fatalf("a second Ensure replaced the container: %s → %s", first.ID, again.ID)
	}

	d, _ := rt.daemonFor(mustTarget(t, in.Target))
	vol, err := d.api.VolumeInspect(testContext(t), in.StorageName, client.VolumeInspectOptions{})
	if err != nil {
		t.Fatalf("volume %s: %v", in.StorageName, err)
	}
	if vol.Volume.Labels[labelProject] != in.ProjectID {
		t.Errorf("volume labels = %v", vol.Volume.Labels)
	}

	cfg, host := first.Config, first.HostConfig
	if !ownedBy(cfg.Labels) || cfg.Labels[labelProject] != in.ProjectID || cfg.Labels[labelFingerprint] != fingerprint(mustResolve(t, rt, in)) {
		t.Errorf("labels = %v", cfg.Labels)
	}
	if cfg.WorkingDir != workspaceDir {
		t.Errorf("WorkingDir = %q", cfg.WorkingDir)
	}
	if host.Memory != 4096<<20 {
		t.Errorf("Memory = %d, want 4096 MiB", host.Memory)
	}
	if host.NanoCPUs != 2e9 && host.NanoCPUs != int64(d.ncpu)*1e9 {
		t.Errorf("NanoCPUs = %d, want 2 CPUs (or the host's %d)", host.NanoCPUs, d.ncpu)
	}
	if host.NetworkMode != "none" {
		t.Errorf("NetworkMode = %q, want none", host.NetworkMode)
	}
	if !strings.Contains(host.Tmpfs["/tmp"], "size=1g") {
		t.Errorf("Tmpfs = %v", host.Tmpfs)
	}
	if len(first.Mounts) != 1 || first.Mounts[0].Name != in.StorageName || first.Mounts[0].Destination != workspaceDir {
		t.Errorf("Mounts = %+v", first.Mounts)
	}
	// No network at all: only the loopback interface exists.
	if got := sh(t, rt, in, "ls /sys/class/net"); got != "lo" {
		t.Errorf("interfaces = %q, want lo only", got)
	}
	if got := sh(t, rt, in, "grep ' /tmp ' /proc/mounts"); !strings.HasPrefix(got, "tmpfs /tmp tmpfs") || strings.Contains(got, "noexec") {
		t.Errorf("/tmp mount = %q, want an exec-able tmpfs", got)
	}
}

func TestWorkspaceSurvivesStopRebuildAndGeneration(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t)
	in := newInstance(t, rt)
	ensure(t, rt, in)
	sh(t, rt, in, "echo kept > /workspace/keep.txt")
	first := inspect(t, rt, in).Container.ID

	if err := rt.Stop(testContext(t), in); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	wantState(t, rt, in, ports.SandboxStopped)
	if _, err := rt.Exec(testContext(t), in, ports.ExecRequest{Cmd: []string{"true"}}); !errs.Is(err, errs.Conflict) {
		t.Errorf("Exec on a stopped container: %v, want conflict", err)
	}
	ensure(t, rt, in)
	wantState(t, rt, in, ports.SandboxRunning)
	if id := inspect(t, rt, in).Container.ID; id != first {
		t.Errorf("restarting replaced the container")
	}
	if got := sh(t, rt, in, "cat /workspace/keep.txt"); got != "kept" {
		t.Fatalf("after stop/start: %q", got)
	}

	if err := rt.Rebuild(testContext(t), in); err != nil {
		t.Fatalf("Rebuild: %v", err)
	}
	rebuilt := inspect(t, rt, in).Container.ID
	if rebuilt == first {
		t.Errorf("Rebuild kept the container %s", first)
	}
	if got := sh(t, rt, in, "cat /workspace/keep.txt"); got != "kept" {
		t.Fatalf("after rebuild: %q", got)
	}

	in.Generation++
	ensure(t, rt, in)
	if id := inspect(t, rt, in).Container.ID; id == rebuilt {
		t.Errorf("a new generation kept the container %s", id)
	}
	if got := sh(t, rt, in, "cat /workspace/keep.txt"); got != "kept" {
		t.Fatalf("after a generation change: %q", got)
	}
}

func TestDestroyRemovesContainerAndVolume(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t)
	in := newInstance(t, rt)
	ensure(t, rt, in)
	ctx := testContext(t)
	if err := rt.Destroy(ctx, in); err != nil {
		t.Fatalf("Destroy: %v", err)
	}
	wantState(t, rt, in, ports.SandboxAbsent)
	d, _ := rt.daemonFor(mustTarget(t, in.Target))
	if _, err := d.api.VolumeInspect(ctx, in.StorageName, client.VolumeInspectOptions{}); err == nil {
		t.Errorf("volume %s survived Destroy", in.StorageName)
	}
	if err := rt.Destroy(ctx, in); err != nil {
		t.Errorf("second Destroy: %v", err)
	}
	if _, err := rt.Exec(ctx, in, ports.ExecRequest{Cmd: []string{"true"}}); !errs.Is(err, errs.NotFound) {
		t.Errorf("Exec without a container: %v, want not_found", err)
	}
}

// foreignContainer creates a container without our label, removed at the end.
func foreignContainer(t *testing.T, rt *Runtime, name string) string {
	t.Helper()
	d, _ := rt.daemonFor(mustTarget(t, dockerSandbox(testTarget())))
	created, err := d.api.ContainerCreate(testContext(t), client.ContainerCreateOptions{
		Name:       name,
		Config:     &container.Config{Image: testImage, Cmd: []string{"true"}},
		HostConfig: &container.HostConfig{NetworkMode: "none"},
	})
	if err != nil {
		t.Fatalf("create foreign container: %v", err)
	}
	t.Cleanup(func() {
		_, _ = d.api.ContainerRemove(context.Background(), created.ID, client.ContainerRemoveOptions{Force: true})
	})
	return created.ID
}

func TestForeignContainerIsRefused(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t)
	in := newInstance(t, rt)
	id := foreignContainer(t, rt, in.Name)
	ctx := testContext(t)

	for name, err := range map[string]error{
		"Ensure":  rt.Ensure(ctx, in),
		"Rebuild": rt.Rebuild(ctx, in),
		"Destroy": rt.Destroy(ctx, in),
	} {
		if !errs.Is(err, errs.Conflict) {
			t.Errorf("%s over a foreign container: %v, want conflict", name, err)
		}
	}
	if _, err := rt.State(ctx, in); !errs.Is(err, errs.Conflict) {
		t.Errorf("State over a foreign container: %v, want conflict", err)
	}
	d, _ := rt.daemonFor(mustTarget(t, in.Target))
	if _, err := d.api.ContainerInspect(ctx, id, client.ContainerInspectOptions{}); err != nil {
		t.Errorf("the foreign container was touched: %v", err)
	}
}

func TestContainersListsOursOnly(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t)
	in := newInstance(t, rt)
	ensure(t, rt, in)
	foreign := "agents-f" + randomHex(6)
	foreignContainer(t, rt, foreign)
	ctx := testContext(t)

	list, err := rt.Containers(ctx, in.Target)
	if err != nil {
		t.Fatalf("Containers: %v", err)
	}
	var mine *ports.ContainerInfo
	for i, c := range list {
		if c.Name == foreign {
			t.Errorf("Containers lists the foreign %s", foreign)
		}
		if c.Name == in.Name {
			mine = &list[i]
		}
	}
	if mine == nil || mine.ProjectID != in.ProjectID || mine.State != "running" || mine.Image != testImage {
		t.Fatalf("our container in the list: %+v (of %+v)", mine, list)
	}

	for _, name := range []string{foreign, "agents-absent" + randomHex(4)} {
		if err := rt.StopContainer(ctx, in.Target, name); !errs.Is(err, errs.NotFound) {
			t.Errorf("StopContainer(%s): %v, want not_found", name, err)
		}
		if err := rt.RemoveContainer(ctx, in.Target, name); !errs.Is(err, errs.NotFound) {
			t.Errorf("RemoveContainer(%s): %v, want not_found", name, err)
		}
	}
	if err := rt.StopContainer(ctx, in.Target, in.Name); err != nil {
		t.Fatalf("StopContainer: %v", err)
	}
	wantState(t, rt, in, ports.SandboxStopped)
	if err := rt.RemoveContainer(ctx, in.Target, in.Name); err != nil {
		t.Fatalf("RemoveContainer: %v", err)
	}
	wantState(t, rt, in, ports.SandboxAbsent)
}
