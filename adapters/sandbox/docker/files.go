package docker

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// The file calls run small POSIX scripts over argv in the container: paths
// never pass through a shell's parser, and files of the configured user are
// read and written as that user, as a command of the agent's would.

// Exit codes of the file scripts.
const (
	fileMissing = 3
	fileIsDir   = 4
	fileTooBig  = 5
)

const readScript = `f="$1"; max="$2"
[ -e "$f" ] || { echo "no such file: $f" >&2; exit 3; }
[ -d "$f" ] && { echo "$f is a directory: use list_files" >&2; exit 4; }
n=$(wc -c < "$f") || exit 1
[ "$n" -gt "$max" ] && { echo "$n" >&2; exit 5; }
cat -- "$f"`

const writeScript = `d=$(dirname -- "$1") && mkdir -p -- "$d" && cat > "$1"`

const removeScript = `f="$1"
[ -e "$f" ] || { echo "no such file: $f" >&2; exit 3; }
[ -d "$f" ] && { echo "$f is a directory" >&2; exit 4; }
rm -f -- "$f"`

// listScript lists a tree with what every find has: directories first, with
// a trailing slash.
const listScript = `p="$1"; d="$2"
[ -d "$p" ] || { echo "not a directory: $p" >&2; exit 3; }
cd -- "$p" && find . -mindepth 1 -maxdepth "$d" -type d | sed 's|$|/|' && find . -mindepth 1 -maxdepth "$d" ! -type d`

// fileScript runs one of the scripts and returns its exit code, stdout and
// the head of its stderr.
func (r *Runtime) fileScript(ctx context.Context, in ports.ProjectInstance, script string, stdin []byte, argv ...string) (int, []byte, string, error) {
	var out, errOut bytes.Buffer
	req := ports.ExecRequest{Cmd: append([]string{"sh", "-c", script, "sh"}, argv...), WorkDir: workspaceDir,
		Stdout: &out, Stderr: &limitedBuffer{buf: &errOut, max: 4096}}
	if stdin != nil {
		req.Stdin = bytes.NewReader(stdin)
	}
	code, err := r.Exec(ctx, in, req)
	return code, out.Bytes(), strings.TrimSpace(errOut.String()), err
}

// ReadFile reads a whole file of at most limit bytes.
func (r *Runtime) ReadFile(ctx context.Context, in ports.ProjectInstance, path string, limit int64) ([]byte, error) {
	code, out, stderr, err := r.fileScript(ctx, in, readScript, nil, path, strconv.FormatInt(limit, 10))
	if err != nil {
		return nil, err
	}
	switch code {
	case 0:
		return out, nil
	case fileTooBig:
		size, _ := strconv.ParseInt(stderr, 10, 64)
		return nil, &ports.FileTooLargeError{Path: path, Size: size}
	case fileMissing:
		return nil, errs.E(errs.NotFound, "%s", stderr)
	case fileIsDir:
		return nil, errs.E(errs.Validation, "%s", stderr)
	}
	return nil, fmt.Errorf("reading %s failed (exit %d): %s", path, code, stderr)
}

// WriteFile writes a file, creating its parent directories.
func (r *Runtime) WriteFile(ctx context.Context, in ports.ProjectInstance, path string, data []byte) error {
	code, _, stderr, err := r.fileScript(ctx, in, writeScript, data, path)
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("writing %s failed: %s", path, stderr)
	}
	return nil
}

// RemoveFile deletes one file, never a directory.
func (r *Runtime) RemoveFile(ctx context.Context, in ports.ProjectInstance, path string) error {
	code, _, stderr, err := r.fileScript(ctx, in, removeScript, nil, path)
	if err != nil {
		return err
	}
	switch code {
	case 0:
		return nil
	case fileMissing:
		return errs.E(errs.NotFound, "%s", stderr)
	case fileIsDir:
		return errs.E(errs.Validation, "%s", stderr)
	}
	return fmt.Errorf("removing %s failed (exit %d): %s", path, code, stderr)
}

// ListFiles lists a directory's tree to depth levels, relative to it.
func (r *Runtime) ListFiles(ctx context.Context, in ports.ProjectInstance, dir string, depth int) ([]string, error) {
	code, out, stderr, err := r.fileScript(ctx, in, listScript, nil, dir, strconv.Itoa(depth))
	if err != nil {
		return nil, err
	}
	if code != 0 {
		return nil, errs.E(errs.NotFound, "%s", stderr)
	}
	var entries []string
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimPrefix(line, "./"); line != "" {
			entries = append(entries, line)
		}
	}
	return entries, nil
}

// Type is the sandbox type this backend runs.
func (r *Runtime) Type() string { return domain.SandboxDocker }

// Supports: a container can be replaced while its volume keeps the tree.
func (r *Runtime) Supports() domain.SandboxSupports { return domain.SandboxSupports{Rebuild: true} }

// Where names the project's volume and its daemon.
func (r *Runtime) Where(in ports.ProjectInstance) string {
	host := "the local daemon"
	if c, ok := in.Target.Config.(*domain.DockerConfig); ok && c.Host != "" {
		host = displayHost(c.Host)
	}
	return fmt.Sprintf("docker volume %s on %s", in.StorageName, host)
}

// Running lists the projects whose containers run on the target's daemon.
func (r *Runtime) Running(ctx context.Context, t ports.SandboxTarget) ([]string, error) {
	list, err := r.Containers(ctx, t)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range list {
		if c.State == "running" && c.ProjectID != "" {
			ids = append(ids, c.ProjectID)
		}
	}
	return ids, nil
}
