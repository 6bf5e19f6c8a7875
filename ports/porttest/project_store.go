package porttest

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// ProjectStore is an in-memory ports.ProjectStore, ports.SSHHostKeyStore
// and ports.InstanceRefStore. Transactions are serialised and copy-on-write;
// rows go through the same encoding as on disk (configs as JSON, times in
// UTC milliseconds), so a caller never shares memory with a stored row.
// The zero value is empty and ready.
type ProjectStore struct {
	// Sessions holds the sessions BindSession binds and SessionCounts
	// counts (SQLite reads them from the same database); nil means there
	// are none. A transaction's binds reach it when the transaction commits.
	Sessions *SessionStore

	writer sync.Mutex // held by every write transaction
	mu     sync.Mutex // guards state
	state  projectState
}

var (
	_ ports.ProjectStore     = (*ProjectStore)(nil)
	_ ports.SSHHostKeyStore  = (*ProjectStore)(nil)
	_ ports.InstanceRefStore = (*ProjectStore)(nil)
)

// projectState is the committed rows; its maps are never changed once
// committed (a transaction works on clones).
type projectState struct {
	sandboxes map[string]domain.Sandbox
	projects  map[string]domain.Project
}

func (s *ProjectStore) committed() *projectQ {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &projectQ{store: s, state: s.state}
}

// InProjectTx implements ports.ProjectStore: fn's writes are kept only when
// it returns nil.
func (s *ProjectStore) InProjectTx(ctx context.Context, fn func(tx ports.ProjectTx) error) error {
	s.writer.Lock()
	defer s.writer.Unlock()
	q := s.committed()
	old := q.state
	q.state = projectState{sandboxes: map[string]domain.Sandbox{}, projects: map[string]domain.Project{}}
	maps.Copy(q.state.sandboxes, old.sandboxes)
	maps.Copy(q.state.projects, old.projects)
	q.writable, q.binds = true, map[string]string{}
	if err := fn(q); err != nil {
		return err
	}
	for sessionID, projectID := range q.binds {
		if err := s.Sessions.bindProject(ctx, sessionID, projectID); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.state = q.state
	s.mu.Unlock()
	return nil
}

// FindSandbox implements ports.ProjectReader; not_found when absent.
func (s *ProjectStore) FindSandbox(ctx context.Context, id string) (domain.Sandbox, error) {
	return s.committed().FindSandbox(ctx, id)
}

// ListSandboxes implements ports.ProjectReader.
func (s *ProjectStore) ListSandboxes(ctx context.Context) ([]domain.Sandbox, error) {
	return s.committed().ListSandboxes(ctx)
}

// FindProject implements ports.ProjectReader; not_found when absent.
func (s *ProjectStore) FindProject(ctx context.Context, id string) (domain.Project, error) {
	return s.committed().FindProject(ctx, id)
}

// ListProjects implements ports.ProjectReader.
func (s *ProjectStore) ListProjects(ctx context.Context, ownerID string) ([]domain.Project, error) {
	return s.committed().ListProjects(ctx, ownerID)
}

// ProjectsOnSandbox implements ports.ProjectReader.
func (s *ProjectStore) ProjectsOnSandbox(ctx context.Context, sandboxID string) ([]domain.Project, error) {
	return s.committed().ProjectsOnSandbox(ctx, sandboxID)
}

// SessionCounts implements ports.ProjectReader.
func (s *ProjectStore) SessionCounts(ctx context.Context, projectIDs []string) (map[string]int, error) {
	return s.committed().SessionCounts(ctx, projectIDs)
}

// PinSSHHostKey implements ports.SSHHostKeyStore: not_found for a missing
// sandbox, conflict when its docker host is no longer host; the pinned key
// wins over presented.
func (s *ProjectStore) PinSSHHostKey(ctx context.Context, sandboxID, host string, presented domain.SSHHostKey) (domain.SSHHostKey, error) {
	var pinned domain.SSHHostKey
	err := s.InProjectTx(ctx, func(tx ports.ProjectTx) error {
		q := tx.(*projectQ)
		sb, err := q.FindSandbox(ctx, sandboxID)
		if err != nil {
			return err
		}
		if sb.Docker == nil || sb.Docker.Host != host {
			return errs.E(errs.Conflict, "sandbox %q no longer points at this host: its configuration changed while connecting, retry", sb.Name)
		}
		if !sb.SSHHostKey.IsZero() {
			pinned = sb.SSHHostKey
			return nil
		}
		sb.SSHHostKey = presented
		q.state.sandboxes[sandboxID] = storedSandbox(sb)
		pinned = q.state.sandboxes[sandboxID].SSHHostKey
		return nil
	})
	return pinned, err
}

// SwapInstanceRef implements ports.InstanceRefStore: a compare-and-swap
// in one write transaction; not_found for a missing project.
func (s *ProjectStore) SwapInstanceRef(ctx context.Context, projectID, old, next string) (bool, error) {
	swapped := false
	err := s.InProjectTx(ctx, func(tx ports.ProjectTx) error {
		q := tx.(*projectQ)
		p, ok := q.state.projects[projectID]
		if !ok {
			return errs.E(errs.NotFound, "project not found")
		}
		if p.InstanceRef == old {
			p.InstanceRef, swapped = next, true
			q.state.projects[projectID] = p
		}
		return nil
	})
	return swapped, err
}

// projectQ implements ports.ProjectTx over one state: the committed one for
// the store's reads, a private copy inside a transaction.
type projectQ struct {
	store    *ProjectStore
	state    projectState
	writable bool
	binds    map[string]string // session → project, applied at commit
}

// storedSandbox is s as a read gives it back: the config through JSON (a
// copy sharing no pointers), times in milliseconds.
func storedSandbox(s domain.Sandbox) domain.Sandbox {
	var raw []byte
	switch {
	case s.Docker != nil:
		raw, _ = json.Marshal(s.Docker)
	case s.E2B != nil:
		raw, _ = json.Marshal(s.E2B)
	}
	s.Docker, s.E2B = nil, nil
	switch s.Type {
	case domain.SandboxDocker:
		s.Docker = &domain.DockerConfig{}
		_ = json.Unmarshal(orEmptyObject(raw), s.Docker)
	case domain.SandboxE2B:
		s.E2B = &domain.E2BConfig{}
		_ = json.Unmarshal(orEmptyObject(raw), s.E2B)
	}
	s.CreatedAt, s.UpdatedAt = storedTime(s.CreatedAt), storedTime(s.UpdatedAt)
	if s.SSHHostKey.IsZero() {
		s.SSHHostKey = domain.SSHHostKey{}
	} else {
		s.SSHHostKey.PinnedAt = storedTime(s.SSHHostKey.PinnedAt)
	}
	return s
}

func orEmptyObject(raw []byte) []byte {
	if len(raw) == 0 {
		return []byte(`{}`)
	}
	return raw
}

func storedProject(p domain.Project) domain.Project {
	p.Env = slices.Clone(p.Env)
	if len(p.Env) == 0 {
		p.Env = nil
	}
	p.CreatedAt, p.UpdatedAt = storedTime(p.CreatedAt), storedTime(p.UpdatedAt)
	return p
}

// sameName compares names as SQLite's NOCASE collation does (ASCII only).
func sameName(a, b string) bool { return asciiLower(a) == asciiLower(b) }

func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

func (q *projectQ) checkWritable() error {
	if !q.writable {
		return errs.E(errs.Internal, "a write outside InProjectTx")
	}
	return nil
}

// FindSandbox implements ports.ProjectReader.
func (q *projectQ) FindSandbox(_ context.Context, id string) (domain.Sandbox, error) {
	sb, ok := q.state.sandboxes[id]
	if !ok {
		return domain.Sandbox{}, errs.E(errs.NotFound, "sandbox not found")
	}
	return storedSandbox(sb), nil
}

// ListSandboxes implements ports.ProjectReader.
func (q *projectQ) ListSandboxes(context.Context) ([]domain.Sandbox, error) {
	out := []domain.Sandbox{}
	for _, sb := range q.state.sandboxes {
		out = append(out, storedSandbox(sb))
	}
	slices.SortFunc(out, func(a, b domain.Sandbox) int { return cmp.Compare(asciiLower(a.Name), asciiLower(b.Name)) })
	return out, nil
}

// FindProject implements ports.ProjectReader.
func (q *projectQ) FindProject(_ context.Context, id string) (domain.Project, error) {
	p, ok := q.state.projects[id]
	if !ok {
		return domain.Project{}, errs.E(errs.NotFound, "project not found")
	}
	return storedProject(p), nil
}

func (q *projectQ) projectsWhere(keep func(domain.Project) bool, order func(a, b domain.Project) int) []domain.Project {
	out := []domain.Project{}
	for _, p := range q.state.projects {
		if keep(p) {
			out = append(out, storedProject(p))
		}
	}
	slices.SortFunc(out, order)
	return out
}

// ListProjects implements ports.ProjectReader: newest (largest id) first.
func (q *projectQ) ListProjects(_ context.Context, ownerID string) ([]domain.Project, error) {
	return q.projectsWhere(func(p domain.Project) bool { return ownerID == "" || p.OwnerID == ownerID },
		func(a, b domain.Project) int { return cmp.Compare(b.ID, a.ID) }), nil
}

// ProjectsOnSandbox implements ports.ProjectReader, by id.
func (q *projectQ) ProjectsOnSandbox(_ context.Context, sandboxID string) ([]domain.Project, error) {
	return q.projectsWhere(func(p domain.Project) bool { return p.SandboxID == sandboxID },
		func(a, b domain.Project) int { return cmp.Compare(a.ID, b.ID) }), nil
}

// SessionCounts implements ports.ProjectReader, this transaction's binds
// included.
func (q *projectQ) SessionCounts(_ context.Context, projectIDs []string) (map[string]int, error) {
	out := q.store.Sessions.countByProject(projectIDs)
	for _, projectID := range q.binds {
		if slices.Contains(projectIDs, projectID) {
			out[projectID]++
		}
	}
	return out, nil
}

// InsertSandbox implements ports.ProjectWriter; conflict for a taken id or
// name.
func (q *projectQ) InsertSandbox(_ context.Context, s domain.Sandbox) error {
	if err := q.checkWritable(); err != nil {
		return err
	}
	if _, ok := q.state.sandboxes[s.ID]; ok || q.sandboxNameTaken(s) {
		return errs.E(errs.Conflict, "a sandbox named %q already exists in that scope", s.Name)
	}
	q.state.sandboxes[s.ID] = storedSandbox(s)
	return nil
}

func (q *projectQ) sandboxNameTaken(s domain.Sandbox) bool {
	for id, o := range q.state.sandboxes {
		if id != s.ID && sameName(o.Name, s.Name) {
			return true
		}
	}
	return false
}

// UpdateSandbox implements ports.ProjectWriter: a compare-and-set on
// s.Revision-1 (conflict otherwise, a missing row included, as in SQLite)
// that leaves the pinned host key alone.
func (q *projectQ) UpdateSandbox(_ context.Context, s domain.Sandbox) error {
	if err := q.checkWritable(); err != nil {
		return err
	}
	old, ok := q.state.sandboxes[s.ID]
	if !ok || old.Revision != s.Revision-1 {
		return errs.E(errs.Conflict, "the sandbox changed since it was read: re-read and retry")
	}
	if q.sandboxNameTaken(s) {
		return errs.E(errs.Conflict, "a sandbox named %q already exists in that scope", s.Name)
	}
	s.SSHHostKey, s.CreatedAt = old.SSHHostKey, old.CreatedAt
	q.state.sandboxes[s.ID] = storedSandbox(s)
	return nil
}

// DeleteSandbox implements ports.ProjectWriter: not_found when absent,
// conflict while a project lives on it (a foreign key in SQLite).
func (q *projectQ) DeleteSandbox(_ context.Context, id string) error {
	if err := q.checkWritable(); err != nil {
		return err
	}
	if _, ok := q.state.sandboxes[id]; !ok {
		return errs.E(errs.NotFound, "sandbox not found")
	}
	for _, p := range q.state.projects {
		if p.SandboxID == id {
			return errs.E(errs.Conflict, "still referenced by other rows")
		}
	}
	delete(q.state.sandboxes, id)
	return nil
}

// ClearSSHHostKey implements ports.ProjectWriter; not_found when absent.
func (q *projectQ) ClearSSHHostKey(_ context.Context, sandboxID string) error {
	if err := q.checkWritable(); err != nil {
		return err
	}
	sb, ok := q.state.sandboxes[sandboxID]
	if !ok {
		return errs.E(errs.NotFound, "sandbox not found")
	}
	sb.SSHHostKey = domain.SSHHostKey{}
	q.state.sandboxes[sandboxID] = sb
	return nil
}

// checkProject enforces what SQLite's keys do: a unique (owner, name) and
// an existing sandbox.
func (q *projectQ) checkProject(p domain.Project) error {
	for id, o := range q.state.projects {
		if id != p.ID && o.OwnerID == p.OwnerID && sameName(o.Name, p.Name) {
			return errs.E(errs.Conflict, "a project named %q already exists in that scope", p.Name)
		}
	}
	if _, ok := q.state.sandboxes[p.SandboxID]; !ok {
		return errs.E(errs.Conflict, "still referenced by other rows")
	}
	return nil
}

// InsertProject implements ports.ProjectWriter; conflict for a taken id,
// a name the owner uses already, or a missing sandbox.
func (q *projectQ) InsertProject(_ context.Context, p domain.Project) error {
	if err := q.checkWritable(); err != nil {
		return err
	}
	if _, ok := q.state.projects[p.ID]; ok {
		return errs.E(errs.Conflict, "already exists")
	}
	if err := q.checkProject(p); err != nil {
		return err
	}
	q.state.projects[p.ID] = storedProject(p)
	return nil
}

// UpdateProject implements ports.ProjectWriter: a compare-and-set on
// p.Revision-1 (conflict otherwise, a missing row included) that never
// writes the owner, creation time or instance ref.
func (q *projectQ) UpdateProject(_ context.Context, p domain.Project) error {
	if err := q.checkWritable(); err != nil {
		return err
	}
	old, ok := q.state.projects[p.ID]
	if !ok || old.Revision != p.Revision-1 {
		return errs.E(errs.Conflict, "the project changed since it was read: re-read and retry")
	}
	if err := q.checkProject(p); err != nil {
		return err
	}
	p.OwnerID, p.CreatedAt, p.InstanceRef = old.OwnerID, old.CreatedAt, old.InstanceRef
	q.state.projects[p.ID] = storedProject(p)
	return nil
}

// DeleteProject implements ports.ProjectWriter; not_found when absent.
func (q *projectQ) DeleteProject(_ context.Context, id string) error {
	if err := q.checkWritable(); err != nil {
		return err
	}
	if _, ok := q.state.projects[id]; !ok {
		return errs.E(errs.NotFound, "project not found")
	}
	delete(q.state.projects, id)
	return nil
}

// BumpGenerations implements ports.ProjectWriter.
func (q *projectQ) BumpGenerations(_ context.Context, sandboxID string) error {
	if err := q.checkWritable(); err != nil {
		return err
	}
	for id, p := range q.state.projects {
		if p.SandboxID == sandboxID {
			p.Generation++
			q.state.projects[id] = p
		}
	}
	return nil
}

// BindSession implements ports.ProjectWriter: not_found for a session the
// store's Sessions does not hold.
func (q *projectQ) BindSession(ctx context.Context, sessionID, projectID string) (string, bool, error) {
	if err := q.checkWritable(); err != nil {
		return "", false, err
	}
	if bound, ok := q.binds[sessionID]; ok {
		return bound, false, nil
	}
	if q.store.Sessions == nil {
		return "", false, errs.E(errs.NotFound, "session not found")
	}
	sess, err := q.store.Sessions.FindSession(ctx, sessionID)
	if err != nil {
		return "", false, err
	}
	if sess.ProjectID != "" {
		return sess.ProjectID, false, nil
	}
	q.binds[sessionID] = projectID
	return projectID, true, nil
}
