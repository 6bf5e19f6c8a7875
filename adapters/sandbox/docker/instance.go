package docker

import (
	"context"
	"errors"
	"io"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// stopTimeout is how long Stop lets a container end on SIGTERM; the
// keep-alive exits at once, so this only matters for busy containers.
const stopTimeout = 10

// Ensure makes the instance run: the volume is created when missing, a
// container of ours with another fingerprint is replaced (the volume stays),
// a stopped one started, an absent one created (pulling the image only when
// the daemon lacks it). A container of the instance's name without our label
// is conflict; an unreachable daemon or unusable image is upstream.
func (r *Runtime) Ensure(ctx context.Context, pin ports.ProjectInstance) error {
	in, err := r.resolve(pin)
	if err != nil {
		return err
	}
	d, unlock, err := r.instance(in)
	if err != nil {
		return err
	}
	defer unlock()
	return d.ensure(ctx, in, false)
}

// State reports the instance's state: absent with no container, running or
// stopped otherwise. A foreign container of the name is conflict.
func (r *Runtime) State(ctx context.Context, pin ports.ProjectInstance) (ports.SandboxState, error) {
	in, err := r.resolve(pin)
	if err != nil {
		return "", err
	}
	d, err := r.daemonFor(in.Target)
	if err != nil {
		return "", err
	}
	info, err := d.ownContainer(ctx, in.Container)
	if err != nil || info == nil {
		return ports.SandboxAbsent, err
	}
	if isRunning(info) {
		return ports.SandboxRunning, nil
	}
	return ports.SandboxStopped, nil
}

// Stop stops the container, keeping it and the volume; an absent container
// is already stopped.
func (r *Runtime) Stop(ctx context.Context, pin ports.ProjectInstance) error {
	in, err := r.resolve(pin)
	if err != nil {
		return err
	}
	d, unlock, err := r.instance(in)
	if err != nil {
		return err
	}
	defer unlock()
	info, err := d.ownContainer(ctx, in.Container)
	if err != nil || info == nil || !info.State.Running {
		return err
	}
	timeout := stopTimeout
	_, err = d.api.ContainerStop(ctx, info.ID, client.ContainerStopOptions{Timeout: &timeout})
	return d.fail(ignoreNotFound(err), "stop sandbox container %s", in.Container)
}

// Rebuild replaces the container with a fresh one from the current image
// and settings, keeping the volume, and starts it.
func (r *Runtime) Rebuild(ctx context.Context, pin ports.ProjectInstance) error {
	in, err := r.resolve(pin)
	if err != nil {
		return err
	}
	d, unlock, err := r.instance(in)
	if err != nil {
		return err
	}
	defer unlock()
	return d.ensure(ctx, in, true)
}

// Destroy removes the container and the volume; either being absent already
// is fine. A foreign container of the name is conflict (nothing is removed).
func (r *Runtime) Destroy(ctx context.Context, pin ports.ProjectInstance) error {
	in, err := r.resolve(pin)
	if err != nil {
		return err
	}
	d, unlock, err := r.instance(in)
	if err != nil {
		return err
	}
	defer unlock()
	info, err := d.ownContainer(ctx, in.Container)
	if err != nil {
		return err
	}
	if info != nil {
		if err := d.remove(ctx, info.ID, in.Container); err != nil {
			return err
		}
	}
	_, err = d.api.VolumeRemove(ctx, in.Volume, client.VolumeRemoveOptions{Force: true})
	return d.fail(ignoreNotFound(err), "remove sandbox volume %s", in.Volume)
}

// instance resolves the daemon and takes this process's lock on the
// instance's container, so concurrent lifecycle calls do not race.
func (r *Runtime) instance(in dockerInstance) (*daemon, func(), error) {
	if in.Container == "" || in.Volume == "" {
		return nil, nil, errs.E(errs.Validation, "sandbox instance needs a container and a volume name")
	}
	d, err := r.daemonFor(in.Target)
	if err != nil {
		return nil, nil, err
	}
	return d, r.locks.lock(d.display + "|" + in.Container), nil
}

func (d *daemon) ensure(ctx context.Context, in dockerInstance, rebuild bool) error {
	if in.Target.Image == "" {
		return errs.Field("image", "a docker sandbox needs an image")
	}
	fresh, err := d.ensureVolume(ctx, in)
	if err != nil {
		return err
	}
	info, err := d.ownContainer(ctx, in.Container)
	if err != nil {
		return err
	}
	spec := d.instanceSpec(ctx, in)
	if info != nil && (rebuild || info.Config == nil || info.Config.Labels[labelFingerprint] != spec.config.Labels[labelFingerprint]) {
		if err := d.remove(ctx, info.ID, in.Container); err != nil {
			return err
		}
		info = nil
	}
	switch {
	case info == nil:
		if err := d.ensureImage(ctx, in.Target.Image); err != nil {
			return err
		}
		if err := d.createAndStart(ctx, spec); err != nil {
			return err
		}
	case info.State.Paused:
		_, err := d.api.ContainerUnpause(ctx, info.ID, client.ContainerUnpauseOptions{})
		return d.fail(err, "unpause sandbox container %s", in.Container)
	case !info.State.Running:
		if _, err := d.api.ContainerStart(ctx, info.ID, client.ContainerStartOptions{}); err != nil {
			// A container that cannot start again (dead, its runtime gone)
			// is replaced; the tree lives in the volume.
			if err := d.remove(ctx, info.ID, in.Container); err != nil {
				return err
			}
			if err := d.ensureImage(ctx, in.Target.Image); err != nil {
				return err
			}
			return d.createAndStart(ctx, spec)
		}
	}
	if fresh && in.Target.User != "" {
		d.giveWorkspace(ctx, in.Container, in.Target.User)
	}
	return nil
}

// giveWorkspace hands a new volume to the sandbox's user: docker creates it
// root-owned (with whatever the image had at /workspace), which would leave
// a non-root user unable to write its own tree. Best effort — an image
// without chown still runs.
func (d *daemon) giveWorkspace(ctx context.Context, name, user string) {
	_, _ = d.exec(ctx, name, execSpec{
		cmd: []string{"chown", "-R", user, workspaceDir}, user: "0", workDir: "/",
		stdout: io.Discard, stderr: io.Discard,
	})
}

// ensureVolume creates the instance's volume when missing and reports
// whether it did.
func (d *daemon) ensureVolume(ctx context.Context, in dockerInstance) (bool, error) {
	_, err := d.api.VolumeInspect(ctx, in.Volume, client.VolumeInspectOptions{})
	if err == nil {
		return false, nil
	}
	if !cerrdefs.IsNotFound(err) {
		return false, d.fail(err, "inspect sandbox volume %s", in.Volume)
	}
	_, err = d.api.VolumeCreate(ctx, client.VolumeCreateOptions{
		Name:   in.Volume,
		Labels: map[string]string{labelManaged: "true", labelProject: in.ProjectID},
	})
	return err == nil, d.fail(err, "create sandbox volume %s", in.Volume)
}

// ensureImage pulls the image only when the daemon does not have it.
func (d *daemon) ensureImage(ctx context.Context, image string) error {
	_, err := d.api.ImageInspect(ctx, image)
	if err == nil {
		return nil
	}
	if !cerrdefs.IsNotFound(err) {
		return d.fail(err, "inspect image %s", image)
	}
	pull, err := d.api.ImagePull(ctx, image, client.ImagePullOptions{})
	if err == nil {
		err = pull.Wait(ctx)
		_ = pull.Close()
	}
	if err == nil {
		return nil
	}
	if client.IsErrConnectionFailed(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return d.fail(err, "pull image %s", image)
	}
	// The daemon answered but could not pull: no such image, no registry
	// reachable, no credentials. Say which image, in the daemon's words.
	return errs.Wrap(errs.Upstream, err, "image %s is not on the docker daemon at %s and could not be pulled: %s",
		image, d.display, d.scrub(daemonMessage(err)))
}

// createAndStart creates and starts a container. A daemon without an init
// binary refuses Init only at start, naming it; then it retries once without
// Init, and otherwise reports the first failure.
func (d *daemon) createAndStart(ctx context.Context, spec containerSpec) error {
	err := d.createAndStartOnce(ctx, spec)
	if err == nil || spec.host.Init == nil || !*spec.host.Init || ctx.Err() != nil ||
		!strings.Contains(errs.MessageOf(err), "init") {
		return err
	}
	off := false
	spec.host.Init = &off
	if d.createAndStartOnce(ctx, spec) == nil {
		return nil
	}
	return err
}

func (d *daemon) createAndStartOnce(ctx context.Context, spec containerSpec) error {
	created, err := d.api.ContainerCreate(ctx, client.ContainerCreateOptions{Name: spec.name, Config: spec.config, HostConfig: spec.host})
	if err != nil {
		return d.fail(err, "create sandbox container %s", spec.name)
	}
	if _, err := d.api.ContainerStart(ctx, created.ID, client.ContainerStartOptions{}); err != nil {
		// Leave nothing half-made behind: a created-but-unstartable
		// container would be adopted by the next Ensure.
		_, _ = d.api.ContainerRemove(context.WithoutCancel(ctx), created.ID, client.ContainerRemoveOptions{Force: true})
		return d.fail(err, "start sandbox container %s", spec.name)
	}
	return nil
}

// ownContainer inspects a container by name: nil when absent, conflict when
// it exists without our label.
func (d *daemon) ownContainer(ctx context.Context, name string) (*container.InspectResponse, error) {
	res, err := d.api.ContainerInspect(ctx, name, client.ContainerInspectOptions{})
	if cerrdefs.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, d.fail(err, "inspect sandbox container %s", name)
	}
	info := &res.Container
	if info.Config == nil || !ownedBy(info.Config.Labels) {
		return nil, errs.E(errs.Conflict, "a container named %s exists on the docker daemon at %s but was not created by agents-server; remove or rename it", name, d.display)
	}
	if info.State == nil {
		info.State = &container.State{}
	}
	return info, nil
}

func (d *daemon) remove(ctx context.Context, id, name string) error {
	_, err := d.api.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true})
	return d.fail(ignoreNotFound(err), "remove sandbox container %s", name)
}

func isRunning(info *container.InspectResponse) bool {
	return info.State != nil && info.State.Running && !info.State.Paused
}

func ignoreNotFound(err error) error {
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	return err
}
