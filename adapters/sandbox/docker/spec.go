package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"
)

// Labels on everything this package creates. labelManaged is the ownership
// mark: a container without it is never stopped, replaced or removed here.
const (
	labelManaged     = "io.agents-server.managed"
	labelProject     = "io.agents-server.project"
	labelFingerprint = "io.agents-server.fingerprint"
	labelTest        = "io.agents-server.test"
)

// specVersion is part of every fingerprint: bump it when the container
// settings below change, so existing containers are replaced at their next
// Ensure instead of running with the old settings forever.
const specVersion = "1"

const (
	workspaceDir    = "/workspace"
	defaultMemoryMB = 4096
	defaultCPUs     = 2.0
	pidsLimit       = 4096
	tmpfsOptions    = "rw,exec,nosuid,nodev,size=1g,mode=1777"
)

// keepAliveCmd keeps a container up without relying on `sleep infinity`
// (busybox's sleep lacks it) and exits at once on SIGTERM, so Stop is quick.
var keepAliveCmd = []string{"sh", "-c", "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"}

// droppedCaps leaves the default capability set minus raw sockets, device
// nodes and audit writes, which no build or package install needs; the rest
// stays so root can still install packages inside its own container.
var droppedCaps = []string{"NET_RAW", "MKNOD", "AUDIT_WRITE"}

func memoryMB(t dockerTarget) int64 {
	if t.MemoryMB <= 0 {
		return defaultMemoryMB
	}
	return int64(t.MemoryMB)
}

func cpus(t dockerTarget) float64 {
	if t.CPUs <= 0 || math.IsNaN(t.CPUs) {
		return defaultCPUs
	}
	return t.CPUs
}

func networkMode(t dockerTarget) string {
	if t.Network == "" {
		return "none"
	}
	return t.Network
}

// envList renders an environment in a stable order (the fingerprint and the
// tests rely on it).
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// fingerprint identifies the configuration a project's container was made
// from; a different one means the container must be replaced.
func fingerprint(in dockerInstance) string {
	t := in.Target
	parts := []string{
		"v" + specVersion, t.Image, t.Runtime, t.User, networkMode(t),
		fmt.Sprint(memoryMB(t)), fmt.Sprint(cpus(t)), fmt.Sprint(in.Generation),
	}
	parts = append(parts, envList(in.Env)...)
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:16])
}

// ownedBy reports whether labels carry this server's mark.
func ownedBy(labels map[string]string) bool { return labels[labelManaged] == "true" }

// containerSpec is what ContainerCreate receives for one container.
type containerSpec struct {
	name   string
	config *container.Config
	host   *container.HostConfig
}

// instanceSpec is a project's persistent container.
func (d *daemon) instanceSpec(ctx context.Context, in dockerInstance) containerSpec {
	cfg, host := d.baseSpec(ctx, in.Target)
	cfg.Env = envList(in.Env)
	cfg.Cmd = keepAliveCmd
	cfg.WorkingDir = workspaceDir
	cfg.Labels = map[string]string{
		labelManaged:     "true",
		labelProject:     in.ProjectID,
		labelFingerprint: fingerprint(in),
	}
	host.Mounts = []mount.Mount{{Type: mount.TypeVolume, Source: in.Volume, Target: workspaceDir}}
	return containerSpec{name: in.Container, config: cfg, host: host}
}

// baseSpec is what every container of a target shares, the throw-away test
// container included.
func (d *daemon) baseSpec(ctx context.Context, t dockerTarget) (*container.Config, *container.HostConfig) {
	init := true
	limit := int64(pidsLimit)
	cfg := &container.Config{
		Image: t.Image,
		User:  t.User,
		// An image's ENTRYPOINT would wrap our keep-alive (or `echo ok`) and
		// could end it; commands are exec'd, so it would not reach them anyway.
		Entrypoint: []string{},
	}
	host := &container.HostConfig{
		NetworkMode: container.NetworkMode(networkMode(t)),
		Runtime:     t.Runtime,
		Init:        &init,
		CapDrop:     droppedCaps,
		Tmpfs:       map[string]string{"/tmp": tmpfsOptions},
		Resources: container.Resources{
			Memory:    memoryMB(t) * 1024 * 1024,
			NanoCPUs:  int64(d.clampCPUs(ctx, cpus(t)) * 1e9),
			PidsLimit: &limit,
		},
	}
	return cfg, host
}

// clampCPUs lowers a CPU limit to what the daemon's machine has: the daemon
// refuses a NanoCPUs above its CPU count, and the 2-CPU default must not
// make a sandbox unusable on a one-core host.
func (d *daemon) clampCPUs(ctx context.Context, want float64) float64 {
	d.cpuMu.Lock()
	defer d.cpuMu.Unlock()
	if d.ncpu == 0 {
		if info, err := d.api.Info(ctx, client.InfoOptions{}); err == nil {
			d.ncpu = info.Info.NCPU
		}
	}
	if d.ncpu > 0 && want > float64(d.ncpu) {
		return float64(d.ncpu)
	}
	return want
}
