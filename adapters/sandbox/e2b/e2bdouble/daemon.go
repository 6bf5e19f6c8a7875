package e2bdouble

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/envd"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/filesystem"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/filesystem/filesystemconnect"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/process"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/process/processconnect"
)

// fileAPI implements the daemon's generated HTTP server: health and
// whole-file download and upload.
type fileAPI struct{ b *box }

var _ envd.ServerInterface = (*fileAPI)(nil)

func fileError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(envd.Error{Code: status, Message: msg})
}

// GetHealth answers 204.
func (f *fileAPI) GetHealth(w http.ResponseWriter, _ *http.Request) {
	w.WriteHeader(http.StatusNoContent)
}

// GetFiles downloads one file.
func (f *fileAPI) GetFiles(w http.ResponseWriter, _ *http.Request, params envd.GetFilesParams) {
	if params.Path == nil {
		fileError(w, http.StatusBadRequest, "a path is required")
		return
	}
	p := *params.Path
	file, err := os.Open(f.b.hostPath(p))
	if errors.Is(err, fs.ErrNotExist) {
		fileError(w, http.StatusNotFound, "path '"+p+"' does not exist")
		return
	}
	if err != nil {
		fileError(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer file.Close()
	if fi, err := file.Stat(); err == nil && fi.IsDir() {
		fileError(w, http.StatusBadRequest, "path '"+p+"' is a directory")
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = io.Copy(w, file)
}

// PostFiles uploads one file (a raw body, or the first part of a
// multipart form), making its parent directories.
func (f *fileAPI) PostFiles(w http.ResponseWriter, r *http.Request, params envd.PostFilesParams) {
	if params.Path == nil {
		fileError(w, http.StatusBadRequest, "a path is required")
		return
	}
	p := *params.Path
	body := io.Reader(r.Body)
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		file, _, err := r.FormFile("file")
		if err != nil {
			fileError(w, http.StatusBadRequest, "no file part")
			return
		}
		defer file.Close()
		body = file
	}
	host := f.b.hostPath(p)
	if fi, err := os.Stat(host); err == nil && fi.IsDir() {
		fileError(w, http.StatusBadRequest, "path '"+p+"' is a directory")
		return
	}
	if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
		fileError(w, http.StatusBadRequest, err.Error())
		return
	}
	out, err := os.Create(host)
	if err != nil {
		fileError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if _, err := io.Copy(out, body); err != nil {
		out.Close()
		fileError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if err := out.Close(); err != nil {
		fileError(w, http.StatusInternalServerError, err.Error())
		return
	}
	clean := path.Clean("/" + p)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode([]envd.EntryInfo{{Path: clean, Name: path.Base(clean), Type: envd.File}})
}

// filesystemService implements the daemon's Filesystem service.
type filesystemService struct {
	filesystemconnect.UnimplementedFilesystemHandler
	b *box
}

// entry describes a sandbox path.
func (s *filesystemService) entry(p string) (*filesystem.EntryInfo, error) {
	clean := path.Clean("/" + p)
	fi, err := os.Lstat(s.b.hostPath(clean))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, connect.NewError(connect.CodeNotFound, errors.New("path '"+clean+"' does not exist"))
	}
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	e := &filesystem.EntryInfo{Name: path.Base(clean), Path: clean, Size: fi.Size(), Mode: uint32(fi.Mode().Perm()),
		Permissions: fi.Mode().String(), Owner: "root", Group: "root", ModifiedTime: timestamppb.New(fi.ModTime()),
		Type: filesystem.FileType_FILE_TYPE_FILE}
	switch {
	case fi.IsDir():
		e.Type = filesystem.FileType_FILE_TYPE_DIRECTORY
	case fi.Mode()&os.ModeSymlink != 0:
		e.Type = filesystem.FileType_FILE_TYPE_SYMLINK
	}
	return e, nil
}

// Stat describes one path.
func (s *filesystemService) Stat(_ context.Context, req *connect.Request[filesystem.StatRequest]) (*connect.Response[filesystem.StatResponse], error) {
	e, err := s.entry(req.Msg.GetPath())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&filesystem.StatResponse{Entry: e}), nil
}

// MakeDir makes a directory and its parents; an existing one is
// already_exists.
func (s *filesystemService) MakeDir(_ context.Context, req *connect.Request[filesystem.MakeDirRequest]) (*connect.Response[filesystem.MakeDirResponse], error) {
	host := s.b.hostPath(req.Msg.GetPath())
	if _, err := os.Stat(host); err == nil {
		return nil, connect.NewError(connect.CodeAlreadyExists, errors.New("directory already exists"))
	}
	if err := os.MkdirAll(host, 0o755); err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	e, err := s.entry(req.Msg.GetPath())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&filesystem.MakeDirResponse{Entry: e}), nil
}

// Move renames a path.
func (s *filesystemService) Move(_ context.Context, req *connect.Request[filesystem.MoveRequest]) (*connect.Response[filesystem.MoveResponse], error) {
	if err := os.Rename(s.b.hostPath(req.Msg.GetSource()), s.b.hostPath(req.Msg.GetDestination())); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, connect.NewError(connect.CodeNotFound, err)
		}
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	e, err := s.entry(req.Msg.GetDestination())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&filesystem.MoveResponse{Entry: e}), nil
}

// ListDir lists a directory's entries to the depth asked (1: its
// children).
func (s *filesystemService) ListDir(_ context.Context, req *connect.Request[filesystem.ListDirRequest]) (*connect.Response[filesystem.ListDirResponse], error) {
	dir, err := s.entry(req.Msg.GetPath())
	if err != nil {
		return nil, err
	}
	if dir.GetType() != filesystem.FileType_FILE_TYPE_DIRECTORY {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("path '"+dir.GetPath()+"' is not a directory"))
	}
	depth := int(req.Msg.GetDepth())
	if depth < 1 {
		depth = 1
	}
	var out []*filesystem.EntryInfo
	var walk func(p string, level int) error
	walk = func(p string, level int) error {
		children, err := os.ReadDir(s.b.hostPath(p))
		if err != nil {
			return err
		}
		for _, c := range children {
			child := path.Join(p, c.Name())
			e, err := s.entry(child)
			if err != nil {
				continue
			}
			out = append(out, e)
			if e.GetType() == filesystem.FileType_FILE_TYPE_DIRECTORY && level < depth {
				if err := walk(child, level+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(dir.GetPath(), 1); err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	return connect.NewResponse(&filesystem.ListDirResponse{Entries: out}), nil
}

// Remove removes a file or a whole directory.
func (s *filesystemService) Remove(_ context.Context, req *connect.Request[filesystem.RemoveRequest]) (*connect.Response[filesystem.RemoveResponse], error) {
	if _, err := s.entry(req.Msg.GetPath()); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(s.b.hostPath(req.Msg.GetPath())); err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	return connect.NewResponse(&filesystem.RemoveResponse{}), nil
}

// processService implements the daemon's Process service.
type processService struct {
	processconnect.UnimplementedProcessHandler
	b *box
}

// Start runs a process and streams its events until it ends. The process
// outlives a client that goes away, as the daemon's do; only a signal
// ends it early — or, as envd's, the timeout the call forwarded
// (Connect-Timeout-Ms): when it runs out the process alone is killed and
// the stream ends deadline_exceeded.
func (s *processService) Start(ctx context.Context, req *connect.Request[process.StartRequest], stream *connect.ServerStream[process.StartResponse]) error {
	p, err := s.b.start(req.Msg)
	if errors.Is(err, errNotRunning) {
		return connect.NewError(connect.CodeUnavailable, err)
	}
	if err != nil {
		return connect.NewError(connect.CodeInvalidArgument, err)
	}
	if ms, err := strconv.ParseInt(req.Header().Get("Connect-Timeout-Ms"), 10, 64); err == nil && ms > 0 {
		timeout := time.Duration(ms)*time.Millisecond - s.b.deadlineLead
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
		kill := time.AfterFunc(timeout, func() { p.signal(syscall.SIGKILL) })
		go func() {
			<-p.done
			kill.Stop()
		}()
	}
	if err := stream.Send(&process.StartResponse{Event: &process.ProcessEvent{Event: &process.ProcessEvent_Start{Start: &process.ProcessEvent_StartEvent{Pid: p.pid}}}}); err != nil {
		go drain(p)
		return err
	}
	for {
		select {
		case <-ctx.Done():
			if s.b.deadlineSendsEnd && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				for ev := range p.events { // the kill at the deadline ends them
					_ = stream.Send(&process.StartResponse{Event: ev})
				}
				return nil
			}
			go drain(p)
			return ctx.Err()
		case ev, ok := <-p.events:
			if !ok {
				return nil
			}
			if err := stream.Send(&process.StartResponse{Event: ev}); err != nil {
				go drain(p)
				return err
			}
		}
	}
}

// drain discards a process's events nobody reads any more.
func drain(p *proc) {
	for range p.events {
	}
}

// List lists the running processes.
func (s *processService) List(context.Context, *connect.Request[process.ListRequest]) (*connect.Response[process.ListResponse], error) {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	out := &process.ListResponse{}
	for _, p := range s.b.procs {
		info := &process.ProcessInfo{Config: p.cfg, Pid: p.pid}
		if p.tag != "" {
			tag := p.tag
			info.Tag = &tag
		}
		out.Processes = append(out.Processes, info)
	}
	return connect.NewResponse(out), nil
}

func (s *processService) find(sel *process.ProcessSelector) (*proc, error) {
	if p := s.b.find(sel); p != nil {
		return p, nil
	}
	return nil, connect.NewError(connect.CodeNotFound, errors.New("process not found"))
}

// SendInput writes to a process's stdin or PTY.
func (s *processService) SendInput(_ context.Context, req *connect.Request[process.SendInputRequest]) (*connect.Response[process.SendInputResponse], error) {
	p, err := s.find(req.Msg.GetProcess())
	if err != nil {
		return nil, err
	}
	in := req.Msg.GetInput()
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case in.GetPty() != nil && p.tty != nil:
		_, err = p.tty.Write(in.GetPty())
	case in.GetStdin() != nil && p.stdin != nil && !p.closed:
		_, err = p.stdin.Write(in.GetStdin())
	default:
		return nil, connect.NewError(connect.CodeFailedPrecondition, errors.New("the process takes no such input"))
	}
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	return connect.NewResponse(&process.SendInputResponse{}), nil
}

// CloseStdin closes a process's stdin.
func (s *processService) CloseStdin(_ context.Context, req *connect.Request[process.CloseStdinRequest]) (*connect.Response[process.CloseStdinResponse], error) {
	p, err := s.find(req.Msg.GetProcess())
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stdin != nil && !p.closed {
		p.closed = true
		_ = p.stdin.Close()
	}
	return connect.NewResponse(&process.CloseStdinResponse{}), nil
}

// SendSignal signals a process — the process alone, as envd does.
func (s *processService) SendSignal(_ context.Context, req *connect.Request[process.SendSignalRequest]) (*connect.Response[process.SendSignalResponse], error) {
	p, err := s.find(req.Msg.GetProcess())
	if err != nil {
		return nil, err
	}
	sig := syscall.SIGTERM
	if req.Msg.GetSignal() == process.Signal_SIGNAL_SIGKILL {
		sig = syscall.SIGKILL
	}
	p.signal(sig)
	return connect.NewResponse(&process.SendSignalResponse{}), nil
}

// Update resizes a process's PTY.
func (s *processService) Update(_ context.Context, req *connect.Request[process.UpdateRequest]) (*connect.Response[process.UpdateResponse], error) {
	p, err := s.find(req.Msg.GetProcess())
	if err != nil {
		return nil, err
	}
	if size := req.Msg.GetPty().GetSize(); size != nil && p.tty != nil {
		if err := resize(p.tty, uint16(size.GetCols()), uint16(size.GetRows())); err != nil {
			return nil, connect.NewError(connect.CodeInternal, err)
		}
	}
	return connect.NewResponse(&process.UpdateResponse{}), nil
}
