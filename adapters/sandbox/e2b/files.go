package e2b

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path"
	"slices"
	"strings"

	"connectrpc.com/connect"

	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/envd"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/filesystem"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// stat describes one path in the sandbox: not_found when it is missing.
func (c *conn) stat(ctx context.Context, p string) (*filesystem.EntryInfo, error) {
	res, err := c.fs.Stat(ctx, connect.NewRequest(&filesystem.StatRequest{Path: p}))
	if err != nil {
		if connect.CodeOf(err) == connect.CodeNotFound {
			return nil, errs.E(errs.NotFound, "%s does not exist", p)
		}
		return nil, c.cfg.daemonFail(ctx, err, "reading %s in e2b sandbox %s", p, c.id)
	}
	return res.Msg.GetEntry(), nil
}

// ReadFile implements ports.SandboxBackend.
func (r *Runtime) ReadFile(ctx context.Context, in ports.ProjectInstance, p string, limit int64) ([]byte, error) {
	live, err := r.connOf(ctx, in)
	if err != nil {
		return nil, err
	}
	e, err := live.stat(ctx, p)
	if err != nil {
		return nil, err
	}
	if e.GetType() == filesystem.FileType_FILE_TYPE_DIRECTORY {
		return nil, errs.E(errs.Validation, "%s is a directory", p)
	}
	if e.GetSize() > limit {
		return nil, &ports.FileTooLargeError{Path: p, Size: e.GetSize()}
	}
	user := envd.User(runAs)
	res, err := live.files.GetFiles(ctx, &envd.GetFilesParams{Path: &p, Username: &user})
	if err != nil {
		return nil, live.cfg.daemonFail(ctx, err, "reading %s in e2b sandbox %s", p, live.id)
	}
	defer res.Body.Close()
	if err := live.fileAnswer(res, "reading "+p); err != nil {
		return nil, err
	}
	// The file may have grown since the stat: never hold more than limit.
	b, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, live.cfg.daemonFail(ctx, err, "reading %s in e2b sandbox %s", p, live.id)
	}
	if int64(len(b)) > limit {
		return nil, &ports.FileTooLargeError{Path: p, Size: int64(len(b))}
	}
	return b, nil
}

// fileAnswer translates the file API's refusals.
func (c *conn) fileAnswer(res *http.Response, what string) error {
	if res.StatusCode/100 == 2 {
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	var e envd.Error
	msg := strings.TrimSpace(string(body))
	if decodeJSON(body, &e) == nil && e.Message != "" {
		msg = e.Message
	}
	msg = c.cfg.scrub(msg)
	switch res.StatusCode {
	case http.StatusNotFound:
		return errs.E(errs.NotFound, "%s: %s", what, msg)
	case http.StatusBadRequest:
		return errs.E(errs.Validation, "%s: %s", what, msg)
	case http.StatusUnauthorized, http.StatusForbidden:
		return errs.E(errs.Upstream, "%s: the daemon of e2b sandbox %s refused its credentials (%d): %s", what, c.id, res.StatusCode, msg)
	}
	return errs.E(errs.Upstream, "%s: the daemon of e2b sandbox %s answered %d: %s", what, c.id, res.StatusCode, msg)
}

// WriteFile implements ports.SandboxBackend: one upload, which creates
// the parent directories.
func (r *Runtime) WriteFile(ctx context.Context, in ports.ProjectInstance, p string, data []byte) error {
	live, err := r.connOf(ctx, in)
	if err != nil {
		return err
	}
	user := envd.User(runAs)
	res, err := live.files.PostFilesWithBody(ctx, &envd.PostFilesParams{Path: &p, Username: &user}, "application/octet-stream", bytes.NewReader(data))
	if err != nil {
		return live.cfg.daemonFail(ctx, err, "writing %s in e2b sandbox %s", p, live.id)
	}
	defer res.Body.Close()
	return live.fileAnswer(res, "writing "+p)
}

// RemoveFile implements ports.SandboxBackend.
func (r *Runtime) RemoveFile(ctx context.Context, in ports.ProjectInstance, p string) error {
	live, err := r.connOf(ctx, in)
	if err != nil {
		return err
	}
	e, err := live.stat(ctx, p)
	if err != nil {
		return err
	}
	if e.GetType() == filesystem.FileType_FILE_TYPE_DIRECTORY {
		return errs.E(errs.Validation, "%s is a directory", p)
	}
	if _, err := live.fs.Remove(ctx, connect.NewRequest(&filesystem.RemoveRequest{Path: p})); err != nil {
		return live.cfg.daemonFail(ctx, err, "removing %s in e2b sandbox %s", p, live.id)
	}
	return nil
}

// ListFiles implements ports.SandboxBackend.
func (r *Runtime) ListFiles(ctx context.Context, in ports.ProjectInstance, dir string, depth int) ([]string, error) {
	live, err := r.connOf(ctx, in)
	if err != nil {
		return nil, err
	}
	e, err := live.stat(ctx, dir)
	if err != nil {
		return nil, err
	}
	if e.GetType() != filesystem.FileType_FILE_TYPE_DIRECTORY {
		return nil, errs.E(errs.NotFound, "%s is not a directory", dir)
	}
	if depth < 1 {
		depth = 1
	}
	res, err := live.fs.ListDir(ctx, connect.NewRequest(&filesystem.ListDirRequest{Path: dir, Depth: uint32(depth)}))
	if err != nil {
		return nil, live.cfg.daemonFail(ctx, err, "listing %s in e2b sandbox %s", dir, live.id)
	}
	root := strings.TrimSuffix(path.Clean(dir), "/") + "/"
	var out []string
	for _, e := range res.Msg.GetEntries() {
		rel, ok := strings.CutPrefix(path.Clean(e.GetPath()), root)
		if !ok || rel == "" {
			continue
		}
		if e.GetType() == filesystem.FileType_FILE_TYPE_DIRECTORY {
			rel += "/"
		}
		out = append(out, rel)
	}
	slices.Sort(out)
	return out, nil
}
