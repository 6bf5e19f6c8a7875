package sandboxes

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/ports"
)

// MaxPrompt bounds a sandbox's prompt, in characters.
const MaxPrompt = 20_000

// SandboxInput is what an admin writes about a sandbox. Revision, when
// set, makes an update a compare-and-set.
type SandboxInput struct {
	Name     string
	Type     string
	Config   json.RawMessage
	Prompt   string
	Revision *int64
}

// ListSandboxes returns every sandbox (everyone reads host configuration).
func (s *Service) ListSandboxes(ctx context.Context) ([]domain.Sandbox, error) {
	return s.d.Store.ListSandboxes(ctx)
}

// GetSandbox returns one sandbox.
func (s *Service) GetSandbox(ctx context.Context, id string) (domain.Sandbox, error) {
	return s.d.Store.FindSandbox(ctx, id)
}

// ProjectCount is how many projects live on a sandbox.
func (s *Service) ProjectCount(ctx context.Context, id string) (int, error) {
	ps, err := s.d.Store.ProjectsOnSandbox(ctx, id)
	return len(ps), err
}

func requireAdmin(p domain.Principal) error {
	if !p.IsAdmin() {
		return errs.E(errs.Forbidden, "sandboxes are host configuration: only admins write them")
	}
	return nil
}

// CreateSandbox adds a sandbox. Returns forbidden, validation, conflict
// (name taken).
func (s *Service) CreateSandbox(ctx context.Context, p domain.Principal, in SandboxInput) (domain.Sandbox, error) {
	if err := requireAdmin(p); err != nil {
		return domain.Sandbox{}, err
	}
	now := s.d.Clock.Now()
	sb := domain.Sandbox{ID: s.d.IDs.NewID(), Revision: 1, CreatedAt: now, UpdatedAt: now}
	if err := s.applySandbox(&sb, in, nil); err != nil {
		return domain.Sandbox{}, err
	}
	actx := audit.Change(ctx, now, "sandbox.create", audit.Object{Kind: "sandbox", ID: sb.ID, Name: sb.Name}, audit.Diff(nil, sb)...)
	return sb, s.d.Store.InProjectTx(actx, func(tx ports.ProjectTx) error { return tx.InsertSandbox(ctx, sb) })
}

// UpdateSandbox replaces a sandbox. While projects live on it, its identity
// (type and destination; for e2b also template, auto_pause and
// allow_internet) is frozen (409 naming the count). A content change moves
// the runtime generation of every project on it and severs their
// terminals; a new destination forgets the pinned SSH host key, which was
// the old host's. Returns forbidden, not_found, validation, conflict.
func (s *Service) UpdateSandbox(ctx context.Context, p domain.Principal, id string, in SandboxInput) (domain.Sandbox, error) {
	if err := requireAdmin(p); err != nil {
		return domain.Sandbox{}, err
	}
	var out domain.Sandbox
	var retired []domain.Project
	actx, rec := audit.Stage(ctx, s.d.Clock.Now(), "sandbox.update", audit.Object{Kind: "sandbox", ID: id})
	err := s.d.Store.InProjectTx(actx, func(tx ports.ProjectTx) error {
		before, err := tx.FindSandbox(ctx, id)
		if err != nil {
			return err
		}
		if in.Revision != nil && *in.Revision != before.Revision {
			return errs.E(errs.Conflict, "the sandbox is at revision %d, not %d: re-read and retry", before.Revision, *in.Revision)
		}
		sb := before
		if err := s.applySandbox(&sb, in, &before); err != nil {
			return err
		}
		projects, err := tx.ProjectsOnSandbox(ctx, id)
		if err != nil {
			return err
		}
		if len(projects) > 0 && sb.Identity() != before.Identity() {
			return errs.E(errs.Conflict, "%d project(s) live on this sandbox: its type and destination%s are frozen while they do",
				len(projects), map[bool]string{true: " (and template_id, auto_pause, allow_internet)", false: ""}[sb.Type == domain.SandboxE2B])
		}
		sb.Revision, sb.UpdatedAt = before.Revision+1, s.d.Clock.Now()
		audit.Changed(rec, sb.Name, before, sb)
		if err := tx.UpdateSandbox(ctx, sb); err != nil {
			return err
		}
		if sb.Destination() != before.Destination() && !before.SSHHostKey.IsZero() {
			if err := tx.ClearSSHHostKey(ctx, id); err != nil {
				return err
			}
			sb.SSHHostKey = domain.SSHHostKey{}
		}
		if sb.Content() != before.Content() && len(projects) > 0 {
			retired = projects
			if err := tx.BumpGenerations(ctx, id); err != nil {
				return err
			}
		}
		out = sb
		return nil
	})
	if err == nil {
		for _, pr := range retired {
			s.sever(pr.ID)
		}
	}
	return out, err
}

// applySandbox validates in and writes it into sb; before is the stored
// row on an update, whose secrets the mask keeps.
func (s *Service) applySandbox(sb *domain.Sandbox, in SandboxInput, before *domain.Sandbox) error {
	var f errs.FieldErrors
	name := strings.TrimSpace(in.Name)
	switch {
	case name == "":
		f.Add("name", "is required")
	case utf8.RuneCountInString(name) > 100 || strings.ContainsAny(name, "\r\n"):
		f.Add("name", "must be one line of at most 100 characters")
	}
	if utf8.RuneCountInString(in.Prompt) > MaxPrompt {
		f.Add("prompt", "must be at most %d characters", MaxPrompt)
	}
	typ := in.Type
	if typ == "" && before != nil {
		typ = before.Type
	}
	if _, ok := domain.SandboxTypes[typ]; !ok {
		f.Add("type", "must be docker or e2b")
		return f.Err()
	}
	docker, e2b, err := domain.ParseSandboxConfig(typ, in.Config)
	if err := f.Merge("", err); err != nil {
		return err
	}
	if err := f.Err(); err != nil {
		return err
	}
	next := domain.Sandbox{ID: sb.ID, Name: name, Type: typ, Docker: docker, E2B: e2b, Prompt: in.Prompt,
		Revision: sb.Revision, SSHHostKey: sb.SSHHostKey, CreatedAt: sb.CreatedAt, UpdatedAt: sb.UpdatedAt}
	for field, v := range next.Secrets() {
		if *v != secrets.Mask {
			sealed, err := s.d.Box.Seal(secretPlace(sb.ID, field), *v)
			if err != nil {
				return err
			}
			*v = sealed
			continue
		}
		// The mask keeps the stored credential — but only for the host it
		// was stored for: sending one host's password to another is a leak.
		*v = ""
		if before == nil || before.Type != typ {
			continue
		}
		if before.Destination() != next.Destination() {
			return errs.Field("config."+field, "the stored credential belongs to the previous host: send it again or clear it")
		}
		kept := before.Secrets()[field]
		if kept == nil {
			return errs.Field("config."+field, "has no stored value to keep: send the value")
		}
		*v = *kept
	}
	*sb = next
	return nil
}

// ResetSSHHostKey forgets the host key pinned for a sandbox's ssh:// host,
// so the next connection pins the key it meets — the way out after the
// host was reinstalled or its key rotated. A connection already open is
// left alone: its key was checked when it was made, and commands and
// terminals stream over it. Resetting when nothing is pinned is no error.
// Admins only. Returns forbidden, not_found.
func (s *Service) ResetSSHHostKey(ctx context.Context, p domain.Principal, id string) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	actx := audit.Change(ctx, s.d.Clock.Now(), "sandbox.reset_host_key", audit.Object{Kind: "sandbox", ID: id}, "ssh_host_key")
	return s.d.Store.InProjectTx(actx, func(tx ports.ProjectTx) error { return tx.ClearSSHHostKey(ctx, id) })
}

// DeleteSandbox removes a sandbox no project lives on. Returns forbidden,
// not_found, conflict.
func (s *Service) DeleteSandbox(ctx context.Context, p domain.Principal, id string) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	actx, rec := audit.Stage(ctx, s.d.Clock.Now(), "sandbox.delete", audit.Object{Kind: "sandbox", ID: id})
	return s.d.Store.InProjectTx(actx, func(tx ports.ProjectTx) error {
		sb, err := tx.FindSandbox(ctx, id)
		if err != nil {
			return err
		}
		rec.ObjectName = sb.Name
		projects, err := tx.ProjectsOnSandbox(ctx, id)
		if err != nil {
			return err
		}
		if len(projects) > 0 {
			return errs.E(errs.Conflict, "%d project(s) live on this sandbox: delete them (or move them) first", len(projects))
		}
		return tx.DeleteSandbox(ctx, id)
	})
}

// ConfigView is a sandbox's config as clients read it: canonical, secrets
// masked.
func ConfigView(sb domain.Sandbox) map[string]any {
	masked := sb.WithOwnConfig()
	for _, v := range masked.Secrets() {
		*v = secrets.Masked(*v)
	}
	var raw []byte
	switch {
	case masked.Docker != nil:
		raw, _ = json.Marshal(masked.Docker)
	case masked.E2B != nil:
		raw, _ = json.Marshal(masked.E2B)
	default:
		raw = []byte(`{}`)
	}
	out := map[string]any{}
	_ = json.Unmarshal(raw, &out)
	return out
}

// TestSandbox runs `echo ok` in a throw-away instance: ok false when it ran
// but failed; upstream when the host could not be reached. Admins only.
func (s *Service) TestSandbox(ctx context.Context, p domain.Principal, id string) (bool, string, error) {
	if err := requireAdmin(p); err != nil {
		return false, "", err
	}
	sb, err := s.d.Store.FindSandbox(ctx, id)
	if err != nil {
		return false, "", err
	}
	rt, err := s.backend(sb)
	if err != nil {
		return false, "", err
	}
	t, err := s.target(sb)
	if err != nil {
		return false, "", err
	}
	return rt.Test(ctx, t)
}

// containerAdmin resolves a sandbox for the container routes: only a type
// whose instances are containers on a daemon has them.
func (s *Service) containerAdmin(ctx context.Context, p domain.Principal, id string) (ports.ContainerAdmin, ports.SandboxTarget, error) {
	if err := requireAdmin(p); err != nil {
		return nil, ports.SandboxTarget{}, err
	}
	sb, err := s.d.Store.FindSandbox(ctx, id)
	if err != nil {
		return nil, ports.SandboxTarget{}, err
	}
	admin := s.d.ContainerAdmins[sb.Type]
	if admin == nil {
		return nil, ports.SandboxTarget{}, errs.E(errs.Validation, "sandbox %q is %s, which has no containers to manage", sb.Name, sb.Type)
	}
	if _, err := s.backend(sb); err != nil {
		return nil, ports.SandboxTarget{}, err
	}
	t, err := s.target(sb)
	return admin, t, err
}

// Containers lists this server's containers on a sandbox's daemon.
func (s *Service) Containers(ctx context.Context, p domain.Principal, id string) ([]ports.ContainerInfo, error) {
	admin, t, err := s.containerAdmin(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return admin.Containers(ctx, t)
}

// StopContainer stops one of this server's containers by name.
func (s *Service) StopContainer(ctx context.Context, p domain.Principal, id, name string) error {
	admin, t, err := s.containerAdmin(ctx, p, id)
	if err != nil {
		return err
	}
	return admin.StopContainer(ctx, t, name)
}

// RemoveContainer removes one of this server's containers by name (the
// project's tree stays: deleting the project reclaims that).
func (s *Service) RemoveContainer(ctx context.Context, p domain.Principal, id, name string) error {
	admin, t, err := s.containerAdmin(ctx, p, id)
	if err != nil {
		return err
	}
	return admin.RemoveContainer(ctx, t, name)
}
