package porttest

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Sandbox is an in-memory ports.SandboxBackend and ports.ContainerAdmin:
// instances with a state, a generation and a file tree kept apart from the
// instance (as a docker volume is), so stop, rebuild and removing the
// container keep the files and only Destroy reclaims them. It runs no
// commands and opens no shells of its own: Exec and OpenPTY call the
// Commands and Shells hooks, and fail with internal without them. Every
// call is logged for assertions, and Fail injects errors. The zero value
// is a docker-typed backend with nothing running.
type Sandbox struct {
	// TypeName is what Type reports; "" means docker.
	TypeName string
	// Caps is what Supports reports.
	Caps domain.SandboxSupports
	// Fail, when set, is asked first by every call (op is the method name:
	// "Ensure", "Stop", "Exec", …); an error it returns is the call's.
	Fail func(op string, in ports.ProjectInstance) error
	// Commands runs what Exec is asked to run in a running instance.
	Commands func(ctx context.Context, in ports.ProjectInstance, req ports.ExecRequest) (int, error)
	// Shells opens what OpenPTY is asked for in a running instance.
	Shells func(ctx context.Context, in ports.ProjectInstance, cols, rows uint) (ports.PTY, error)
	// TestResult answers Test; nil answers ok with output "ok".
	TestResult func(t ports.SandboxTarget) (bool, string, error)

	mu        sync.Mutex
	instances map[string]*fakeInstance     // by instance name
	trees     map[string]map[string][]byte // by storage name: absolute path → content
	calls     []SandboxCall
}

// SandboxCall is one logged call: its method name and the instance (or,
// for target-level calls, just the target) it was made for.
type SandboxCall struct {
	Op string
	In ports.ProjectInstance
}

type fakeInstance struct {
	in       ports.ProjectInstance // as last ensured: generation, env, target
	state    ports.SandboxState
	replaced int
}

var (
	_ ports.SandboxBackend = (*Sandbox)(nil)
	_ ports.ContainerAdmin = (*Sandbox)(nil)
)

const workspace = "/workspace"

// begin logs a call and asks Fail; b.mu is not held.
func (b *Sandbox) begin(op string, in ports.ProjectInstance) error {
	b.mu.Lock()
	in.Env = maps.Clone(in.Env)
	b.calls = append(b.calls, SandboxCall{Op: op, In: in})
	b.mu.Unlock()
	if b.Fail != nil {
		return b.Fail(op, in)
	}
	return nil
}

// Calls returns the logged calls of the given ops (all when none are
// named), oldest first.
func (b *Sandbox) Calls(ops ...string) []SandboxCall {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := []SandboxCall{}
	for _, c := range b.calls {
		if len(ops) == 0 || slices.Contains(ops, c.Op) {
			out = append(out, c)
		}
	}
	return out
}

// Replaced reports how often Ensure replaced a project instance of another
// generation (or Rebuild replaced it).
func (b *Sandbox) Replaced(name string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i := b.instances[name]; i != nil {
		return i.replaced
	}
	return 0
}

func storageOf(in ports.ProjectInstance) string {
	if in.StorageName != "" {
		return in.StorageName
	}
	return in.Name
}

// Type implements ports.SandboxBackend.
func (b *Sandbox) Type() string {
	if b.TypeName == "" {
		return domain.SandboxDocker
	}
	return b.TypeName
}

// Supports implements ports.SandboxBackend.
func (b *Sandbox) Supports() domain.SandboxSupports { return b.Caps }

// Ensure implements ports.SandboxBackend: creates, replaces (another
// generation, where Caps.Rebuild allows) or starts the instance.
func (b *Sandbox) Ensure(_ context.Context, in ports.ProjectInstance) error {
	if err := b.begin("Ensure", in); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ensureLocked(in, false)
	return nil
}

func (b *Sandbox) ensureLocked(in ports.ProjectInstance, rebuild bool) {
	if b.instances == nil {
		b.instances, b.trees = map[string]*fakeInstance{}, map[string]map[string][]byte{}
	}
	if b.trees[storageOf(in)] == nil {
		b.trees[storageOf(in)] = map[string][]byte{}
	}
	in.Env = maps.Clone(in.Env)
	i := b.instances[in.Name]
	switch {
	case i == nil:
		b.instances[in.Name] = &fakeInstance{in: in, state: ports.SandboxRunning}
		return
	case rebuild || (i.in.Generation != in.Generation && b.Caps.Rebuild):
		i.replaced++
		i.in = in
	}
	i.state = ports.SandboxRunning
}

// State implements ports.SandboxBackend.
func (b *Sandbox) State(_ context.Context, in ports.ProjectInstance) (ports.SandboxState, error) {
	if err := b.begin("State", in); err != nil {
		return "", err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if i := b.instances[in.Name]; i != nil {
		return i.state, nil
	}
	return ports.SandboxAbsent, nil
}

// Stop implements ports.SandboxBackend; not_found for an absent instance.
func (b *Sandbox) Stop(_ context.Context, in ports.ProjectInstance) error {
	if err := b.begin("Stop", in); err != nil {
		return err
	}
	return b.stopNamed(in.Name)
}

func (b *Sandbox) stopNamed(name string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := b.instances[name]
	if i == nil {
		return errs.E(errs.NotFound, "no instance %s", name)
	}
	i.state = ports.SandboxStopped
	return nil
}

// Rebuild implements ports.SandboxBackend: validation unless Caps.Rebuild.
func (b *Sandbox) Rebuild(_ context.Context, in ports.ProjectInstance) error {
	if err := b.begin("Rebuild", in); err != nil {
		return err
	}
	if !b.Caps.Rebuild {
		return errs.E(errs.Validation, "a %s instance cannot be rebuilt", b.Type())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ensureLocked(in, true)
	return nil
}

// Destroy implements ports.SandboxBackend: the instance and its tree go;
// destroying nothing is no error.
func (b *Sandbox) Destroy(_ context.Context, in ports.ProjectInstance) error {
	if err := b.begin("Destroy", in); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.instances, in.Name)
	delete(b.trees, storageOf(in))
	return nil
}

// files logs op, asks Fail and returns the running instance's files with
// b.mu held until unlock is called (only when err is nil).
func (b *Sandbox) files(op string, in ports.ProjectInstance) (tree map[string][]byte, unlock func(), err error) {
	if err := b.begin(op, in); err != nil {
		return nil, nil, err
	}
	b.mu.Lock()
	if tree, err = b.running(in); err != nil {
		b.mu.Unlock()
		return nil, nil, err
	}
	return tree, b.mu.Unlock, nil
}

// running returns the instance's tree when it runs: not_found when it is
// absent, conflict when it is stopped (as docker answers an exec). b.mu is
// held.
func (b *Sandbox) running(in ports.ProjectInstance) (map[string][]byte, error) {
	i := b.instances[in.Name]
	if i == nil {
		return nil, errs.E(errs.NotFound, "no instance %s", in.Name)
	}
	if i.state != ports.SandboxRunning {
		return nil, errs.E(errs.Conflict, "instance %s is not running", in.Name)
	}
	return b.trees[storageOf(in)], nil
}

// Exec implements ports.SandboxBackend through the Commands hook.
func (b *Sandbox) Exec(ctx context.Context, in ports.ProjectInstance, req ports.ExecRequest) (int, error) {
	if err := b.begin("Exec", in); err != nil {
		return 0, err
	}
	b.mu.Lock()
	_, err := b.running(in)
	b.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if b.Commands == nil {
		return 0, errs.E(errs.Internal, "porttest.Sandbox runs no commands: set Commands")
	}
	return b.Commands(ctx, in, req)
}

// OpenPTY implements ports.SandboxBackend through the Shells hook.
func (b *Sandbox) OpenPTY(ctx context.Context, in ports.ProjectInstance, cols, rows uint) (ports.PTY, error) {
	if err := b.begin("OpenPTY", in); err != nil {
		return nil, err
	}
	b.mu.Lock()
	_, err := b.running(in)
	b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if b.Shells == nil {
		return nil, errs.E(errs.Internal, "porttest.Sandbox opens no shells: set Shells")
	}
	return b.Shells(ctx, in, cols, rows)
}

// abs resolves p against /workspace.
func abs(p string) string {
	if !path.IsAbs(p) {
		p = path.Join(workspace, p)
	}
	return path.Clean(p)
}

// isDir reports whether dir holds a file somewhere below it (the tree
// keeps files; directories are their parents). /workspace always is one.
func isDir(tree map[string][]byte, dir string) bool {
	if dir == workspace {
		return true
	}
	for f := range tree {
		if strings.HasPrefix(f, dir+"/") {
			return true
		}
	}
	return false
}

// ReadFile implements ports.SandboxBackend.
func (b *Sandbox) ReadFile(_ context.Context, in ports.ProjectInstance, p string, limit int64) ([]byte, error) {
	tree, unlock, err := b.files("ReadFile", in)
	if err != nil {
		return nil, err
	}
	defer unlock()
	p = abs(p)
	data, ok := tree[p]
	switch {
	case !ok && isDir(tree, p):
		return nil, errs.E(errs.Validation, "%s is a directory: use list_files", p)
	case !ok:
		return nil, errs.E(errs.NotFound, "no such file: %s", p)
	case int64(len(data)) > limit:
		return nil, &ports.FileTooLargeError{Path: p, Size: int64(len(data))}
	}
	return slices.Clone(data), nil
}

// WriteFile implements ports.SandboxBackend.
func (b *Sandbox) WriteFile(_ context.Context, in ports.ProjectInstance, p string, data []byte) error {
	tree, unlock, err := b.files("WriteFile", in)
	if err != nil {
		return err
	}
	defer unlock()
	p = abs(p)
	if isDir(tree, p) {
		return errs.E(errs.Validation, "%s is a directory", p)
	}
	tree[p] = slices.Clone(data)
	return nil
}

// RemoveFile implements ports.SandboxBackend.
func (b *Sandbox) RemoveFile(_ context.Context, in ports.ProjectInstance, p string) error {
	tree, unlock, err := b.files("RemoveFile", in)
	if err != nil {
		return err
	}
	defer unlock()
	p = abs(p)
	if _, ok := tree[p]; !ok {
		if isDir(tree, p) {
			return errs.E(errs.Validation, "%s is a directory", p)
		}
		return errs.E(errs.NotFound, "no such file: %s", p)
	}
	delete(tree, p)
	return nil
}

// ListFiles implements ports.SandboxBackend: directories first, each group
// sorted.
func (b *Sandbox) ListFiles(_ context.Context, in ports.ProjectInstance, dir string, depth int) ([]string, error) {
	tree, unlock, err := b.files("ListFiles", in)
	if err != nil {
		return nil, err
	}
	defer unlock()
	dir = abs(dir)
	if !isDir(tree, dir) {
		return nil, errs.E(errs.NotFound, "not a directory: %s", dir)
	}
	dirs, files := map[string]bool{}, []string{}
	for f := range tree {
		rel, ok := strings.CutPrefix(f, dir+"/")
		if !ok {
			continue
		}
		parts := strings.Split(rel, "/")
		for n := 1; n < len(parts) && n <= depth; n++ {
			dirs[strings.Join(parts[:n], "/")+"/"] = true
		}
		if len(parts) <= depth {
			files = append(files, rel)
		}
	}
	slices.Sort(files)
	return append(slices.Sorted(maps.Keys(dirs)), files...), nil
}

// Export implements ports.SandboxBackend: a tar of /workspace's files,
// named relative to it.
func (b *Sandbox) Export(_ context.Context, in ports.ProjectInstance, w io.Writer) error {
	if err := b.begin("Export", in); err != nil {
		return err
	}
	b.mu.Lock()
	tree, err := b.running(in)
	files := maps.Clone(tree)
	b.mu.Unlock()
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		rel, ok := strings.CutPrefix(name, workspace+"/")
		if !ok {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Name: rel, Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(files[name]); err != nil {
			return err
		}
	}
	return tw.Close()
}

// Running implements ports.SandboxBackend: the projects whose instances run
// for the target's sandbox.
func (b *Sandbox) Running(_ context.Context, t ports.SandboxTarget) ([]string, error) {
	if err := b.begin("Running", ports.ProjectInstance{Target: t}); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := []string{}
	for _, i := range b.instances {
		if i.state == ports.SandboxRunning && i.in.Target.SandboxID == t.SandboxID {
			out = append(out, i.in.ProjectID)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Test implements ports.SandboxBackend with TestResult.
func (b *Sandbox) Test(_ context.Context, t ports.SandboxTarget) (bool, string, error) {
	if err := b.begin("Test", ports.ProjectInstance{Target: t}); err != nil {
		return false, "", err
	}
	if b.TestResult != nil {
		return b.TestResult(t)
	}
	return true, "ok", nil
}

// Where implements ports.SandboxBackend.
func (b *Sandbox) Where(in ports.ProjectInstance) string {
	return fmt.Sprintf("fake storage %s on sandbox %s", storageOf(in), in.Target.SandboxID)
}

// Containers implements ports.ContainerAdmin: the instances of the
// target's sandbox, by name.
func (b *Sandbox) Containers(_ context.Context, t ports.SandboxTarget) ([]ports.ContainerInfo, error) {
	if err := b.begin("Containers", ports.ProjectInstance{Target: t}); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := []ports.ContainerInfo{}
	for _, name := range slices.Sorted(maps.Keys(b.instances)) {
		i := b.instances[name]
		if i.in.Target.SandboxID != t.SandboxID {
			continue
		}
		image := ""
		if c, ok := i.in.Target.Config.(*domain.DockerConfig); ok {
			image = c.Image
		}
		out = append(out, ports.ContainerInfo{Name: name, ProjectID: i.in.ProjectID, State: string(i.state), Image: image})
	}
	return out, nil
}

// owned finds an instance of the target's sandbox by name; b.mu is held.
func (b *Sandbox) owned(t ports.SandboxTarget, name string) (*fakeInstance, error) {
	i := b.instances[name]
	if i == nil || i.in.Target.SandboxID != t.SandboxID {
		return nil, errs.E(errs.NotFound, "no container named %q of this server", name)
	}
	return i, nil
}

// StopContainer implements ports.ContainerAdmin; not_found for a name it
// did not create on the target.
func (b *Sandbox) StopContainer(_ context.Context, t ports.SandboxTarget, name string) error {
	if err := b.begin("StopContainer", ports.ProjectInstance{Name: name, Target: t}); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	i, err := b.owned(t, name)
	if err == nil {
		i.state = ports.SandboxStopped
	}
	return err
}

// RemoveContainer implements ports.ContainerAdmin: the instance goes, its
// tree stays; not_found for a name it did not create on the target.
func (b *Sandbox) RemoveContainer(_ context.Context, t ports.SandboxTarget, name string) error {
	if err := b.begin("RemoveContainer", ports.ProjectInstance{Name: name, Target: t}); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, err := b.owned(t, name); err != nil {
		return err
	}
	delete(b.instances, name)
	return nil
}
