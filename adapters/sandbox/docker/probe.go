package docker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// maxTestOutput caps what Test returns of the container's output.
const maxTestOutput = 64 << 10

// Test runs `echo ok` in a throw-away, auto-removed container with the
// target's image, runtime, user, network and limits. It returns ok with the
// output when the command exited 0; ok false with the output (or the
// daemon's refusal) when the container was made but could not run or failed
// or timed out; an error — upstream, or validation for a malformed host —
// when the daemon cannot be reached or the image cannot be had.
func (r *Runtime) Test(ctx context.Context, pt ports.SandboxTarget) (bool, string, error) {
	t, err := targetOf(pt)
	if err != nil {
		return false, "", err
	}
	if t.Image == "" {
		return false, "", errs.Field("image", "a docker sandbox needs an image")
	}
	d, err := r.daemonFor(t)
	if err != nil {
		return false, "", err
	}
	if err := d.ensureImage(ctx, t.Image); err != nil {
		return false, "", err
	}
	cfg, host := d.baseSpec(ctx, t)
	cfg.Cmd = []string{"echo", "ok"}
	cfg.Labels = map[string]string{labelTest: r.probeID}
	cfg.AttachStdout, cfg.AttachStderr = true, true
	host.AutoRemove = true
	created, err := d.api.ContainerCreate(ctx, client.ContainerCreateOptions{Name: "agents-test-" + randomHex(6), Config: cfg, HostConfig: host})
	if err != nil {
		return d.testRefused(err, "create")
	}
	// From here on the container must not outlive the test, whatever happens.
	defer func() {
		_, _ = d.api.ContainerRemove(context.WithoutCancel(ctx), created.ID, client.ContainerRemoveOptions{Force: true})
	}()

	// Wait and attach before the start, or a quick `echo ok` (and, with
	// AutoRemove, the container itself) could be gone before we look.
	waitCtx, cancelWait := context.WithTimeout(ctx, r.opts.TestTimeout)
	defer cancelWait()
	waited := d.api.ContainerWait(waitCtx, created.ID, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	att, err := d.api.ContainerAttach(ctx, created.ID, client.ContainerAttachOptions{Stream: true, Stdout: true, Stderr: true})
	if err != nil {
		return false, "", d.fail(err, "attach to the test container")
	}
	defer att.Close()
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() {
		sink := &limitedBuffer{buf: &out, max: maxTestOutput}
		_, _ = stdcopy.StdCopy(sink, sink, att.Reader)
		close(copied)
	}()
	if _, err := d.api.ContainerStart(ctx, created.ID, client.ContainerStartOptions{}); err != nil {
		return d.testRefused(err, "start")
	}

	select {
	case res := <-waited.Result:
		select { // the stream ends with the process; allow a moment for the last bytes
		case <-copied:
		case <-time.After(2 * time.Second):
		}
		output := out.String()
		if res.Error != nil && res.Error.Message != "" {
			output += res.Error.Message + "\n"
		}
		return res.StatusCode == 0, output, nil
	case err := <-waited.Error:
		if ctx.Err() != nil {
			return false, "", ctx.Err()
		}
		if waitCtx.Err() != nil {
			return false, out.String() + fmt.Sprintf("(no exit within %s)\n", r.opts.TestTimeout), nil
		}
		return false, "", d.fail(err, "wait for the test container")
	}
}

// testRefused classifies a create or start failure: the daemon answered, so
// the target is reachable and its settings (user, runtime, network, limits)
// are what failed — ok false with the daemon's words. A transport failure is
// still an error.
func (d *daemon) testRefused(err error, step string) (bool, string, error) {
	if errors.Is(err, context.Canceled) || !isAPIError(err) {
		return false, "", d.fail(err, "%s the test container", step)
	}
	return false, d.scrub(daemonMessage(err)) + "\n", nil
}

// Containers lists this server's containers (those carrying our label) on
// the target's daemon; upstream when it cannot be reached.
func (r *Runtime) Containers(ctx context.Context, pt ports.SandboxTarget) ([]ports.ContainerInfo, error) {
	t, err := targetOf(pt)
	if err != nil {
		return nil, err
	}
	d, err := r.daemonFor(t)
	if err != nil {
		return nil, err
	}
	res, err := d.api.ContainerList(ctx, client.ContainerListOptions{
		All:     true,
		Filters: make(client.Filters).Add("label", labelManaged+"=true"),
	})
	if err != nil {
		return nil, d.fail(err, "list containers")
	}
	out := make([]ports.ContainerInfo, 0, len(res.Items))
	for _, c := range res.Items {
		if !ownedBy(c.Labels) {
			continue
		}
		name := ""
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		out = append(out, ports.ContainerInfo{Name: name, ProjectID: c.Labels[labelProject], State: string(c.State), Image: c.Image})
	}
	return out, nil
}

// StopContainer stops one of this server's containers by name, keeping it;
// a name that is absent or not ours is not_found.
func (r *Runtime) StopContainer(ctx context.Context, pt ports.SandboxTarget, name string) error {
	t, err := targetOf(pt)
	if err != nil {
		return err
	}
	d, info, err := r.managedContainer(ctx, t, name)
	if err != nil {
		return err
	}
	timeout := stopTimeout
	_, err = d.api.ContainerStop(ctx, info.ID, client.ContainerStopOptions{Timeout: &timeout})
	return d.fail(err, "stop container %s", name)
}

// RemoveContainer removes one of this server's containers by name (the
// project's volume stays); a name that is absent or not ours is not_found.
func (r *Runtime) RemoveContainer(ctx context.Context, pt ports.SandboxTarget, name string) error {
	t, err := targetOf(pt)
	if err != nil {
		return err
	}
	d, info, err := r.managedContainer(ctx, t, name)
	if err != nil {
		return err
	}
	return d.remove(ctx, info.ID, name)
}

func (r *Runtime) managedContainer(ctx context.Context, t dockerTarget, name string) (*daemon, *container.InspectResponse, error) {
	d, err := r.daemonFor(t)
	if err != nil {
		return nil, nil, err
	}
	notFound := errs.E(errs.NotFound, "no container named %q of this server on the docker daemon", name)
	if name == "" || strings.ContainsAny(name, "/ ") {
		return nil, nil, notFound
	}
	res, err := d.api.ContainerInspect(ctx, name, client.ContainerInspectOptions{})
	if cerrdefs.IsNotFound(err) {
		return nil, nil, notFound
	}
	if err != nil {
		return nil, nil, d.fail(err, "inspect container %s", name)
	}
	// By name only: an ID (prefix) would also resolve, and the routes act on names.
	if res.Container.Config == nil || !ownedBy(res.Container.Config.Labels) || strings.TrimPrefix(res.Container.Name, "/") != name {
		return nil, nil, notFound
	}
	return d, &res.Container, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
