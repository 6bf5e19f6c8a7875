package sandboxtools

import (
	"context"
	"sync"

	"github.com/agents-server/agents-server/core/sandboxes"
	"github.com/agents-server/agents-server/ports"
)

// workspaceExec is what the sandbox tools need of a held instance.
type workspaceExec interface {
	Exec(ctx context.Context, req ports.ExecRequest) (int, error)
}

// Workspace is one run's use of its project's instance: acquired at the
// first sandbox tool call (a run that never touches the tree starts no
// container), with the run's named shells, all let go at teardown — an
// approval pause included, so a resumed run reopens its shells fresh.
type Workspace struct {
	svc       *sandboxes.Service
	projectID string

	mu     sync.Mutex
	lease  *sandboxes.Lease
	shells map[string]*namedShell
}

// New returns a run's workspace on a project; nothing is acquired yet.
func New(svc *sandboxes.Service, projectID string) *Workspace {
	return &Workspace{svc: svc, projectID: projectID, shells: map[string]*namedShell{}}
}

// hold returns the lease, acquiring it on first use.
func (w *Workspace) hold(ctx context.Context) (*sandboxes.Lease, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lease != nil {
		return w.lease, nil
	}
	l, err := w.svc.Acquire(ctx, w.projectID, sandboxes.ForRun)
	if err != nil {
		return nil, err
	}
	w.lease = l
	return l, nil
}

// shell returns the named shell, opening it on first use; fresh is true
// when this call opened it.
func (w *Workspace) shell(ctx context.Context, name string) (*namedShell, error) {
	l, err := w.hold(ctx)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if sh := w.shells[name]; sh != nil {
		select {
		case <-sh.done:
			delete(w.shells, name)
		default:
			return sh, nil
		}
	}
	sh, err := openShell(l)
	if err != nil {
		return nil, err
	}
	w.shells[name] = sh
	return sh, nil
}

// drop closes one named shell (it died or was abandoned).
func (w *Workspace) drop(name string) {
	w.mu.Lock()
	sh := w.shells[name]
	delete(w.shells, name)
	w.mu.Unlock()
	if sh != nil {
		sh.close()
	}
}

// ProjectID is the project the workspace works on.
func (w *Workspace) ProjectID() string { return w.projectID }

// Teardown closes the shells and releases the instance; the workspace can
// be used again (it acquires anew). A nil workspace is a no-op.
func (w *Workspace) Teardown() {
	if w == nil {
		return
	}
	w.mu.Lock()
	shells, lease := w.shells, w.lease
	w.shells, w.lease = map[string]*namedShell{}, nil
	w.mu.Unlock()
	for _, sh := range shells {
		sh.close()
	}
	if lease != nil {
		lease.Release()
	}
}
