package sandboxes

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/ports"
)

// ProjectInput is what an owner writes about a project. Env nil on an
// update keeps the environment; a masked value keeps the stored one under
// the same name. Revision, when set, makes an update a compare-and-set.
type ProjectInput struct {
	Name      string
	SandboxID string
	Env       *[]domain.EnvVar
	Revision  *int64
}

// Listed is a project with what listings report about it.
type Listed struct {
	domain.Project
	SessionCount int
	// StorageHint says where the files live; set for admins only.
	StorageHint string
}

// ListProjects returns the caller's projects, or (all, admins only) every
// owner's, each with its session count.
func (s *Service) ListProjects(ctx context.Context, p domain.Principal, all bool) ([]Listed, error) {
	owner := p.User.ID
	if all {
		if !p.IsAdmin() {
			return nil, errs.E(errs.Forbidden, "only admins list every owner's projects")
		}
		owner = ""
	}
	list, err := s.d.Store.ListProjects(ctx, owner)
	if err != nil {
		return nil, err
	}
	return s.describe(ctx, p, list)
}

// describe adds session counts and (for admins) storage hints.
func (s *Service) describe(ctx context.Context, p domain.Principal, list []domain.Project) ([]Listed, error) {
	ids := make([]string, len(list))
	for i, pr := range list {
		ids[i] = pr.ID
	}
	counts, err := s.d.Store.SessionCounts(ctx, ids)
	if err != nil {
		return nil, err
	}
	boxes := map[string]domain.Sandbox{}
	out := make([]Listed, 0, len(list))
	for _, pr := range list {
		l := Listed{Project: pr, SessionCount: counts[pr.ID]}
		if p.IsAdmin() {
			sb, ok := boxes[pr.SandboxID]
			if !ok {
				if sb, err = s.d.Store.FindSandbox(ctx, pr.SandboxID); err != nil {
					return nil, err
				}
				boxes[pr.SandboxID] = sb
			}
			l.StorageHint = s.storageHint(pr, sb)
		}
		out = append(out, l)
	}
	return out, nil
}

// storageHint says where a project's tree lives, in its backend's words.
func (s *Service) storageHint(p domain.Project, sb domain.Sandbox) string {
	if b := s.d.Backends[sb.Type]; b != nil {
		// A description needs no secret: the config is passed as stored.
		own := sb.WithOwnConfig()
		return b.Where(ports.ProjectInstance{ProjectID: p.ID, Name: p.InstanceName(), StorageName: p.StorageName(),
			Generation: p.Generation, InstanceRef: p.InstanceRef, Target: ports.SandboxTarget{SandboxID: sb.ID, Type: sb.Type, Config: own.Config()}})
	}
	return fmt.Sprintf("%s sandbox %q", sb.Type, sb.Name)
}

// GetProject returns one project to its owner or an admin (the env is for
// the owner only: the view decides with IsOwner).
func (s *Service) GetProject(ctx context.Context, p domain.Principal, id string) (Listed, error) {
	pr, err := s.d.Store.FindProject(ctx, id)
	if err != nil {
		return Listed{}, err
	}
	if err := pr.CheckManage(p); err != nil {
		return Listed{}, err
	}
	l, err := s.describe(ctx, p, []domain.Project{pr})
	if err != nil {
		return Listed{}, err
	}
	return l[0], nil
}

// OwnProject returns a project its owner may use (bind, open a terminal):
// anyone else's reads as absent.
func (s *Service) OwnProject(ctx context.Context, p domain.Principal, id string) (domain.Project, error) {
	pr, err := s.d.Store.FindProject(ctx, id)
	if err != nil {
		return pr, err
	}
	return pr, pr.CheckOwner(p)
}

// CreateProject adds a project owned by the caller on a sandbox. Returns
// validation (name, env, sandbox) or conflict (name taken).
func (s *Service) CreateProject(ctx context.Context, p domain.Principal, in ProjectInput) (Listed, error) {
	now := s.d.Clock.Now()
	pr := domain.Project{ID: s.d.IDs.NewID(), OwnerID: p.User.ID, Revision: 1, Generation: 1, CreatedAt: now, UpdatedAt: now}
	actx, rec := audit.Stage(ctx, now, "project.create", audit.Object{Kind: "project", ID: pr.ID})
	err := s.d.Store.InProjectTx(actx, func(tx ports.ProjectTx) error {
		if _, err := s.applyProject(ctx, tx, &pr, in, nil); err != nil {
			return err
		}
		audit.Changed(rec, pr.Name, nil, pr)
		return tx.InsertProject(ctx, pr)
	})
	if err != nil {
		return Listed{}, err
	}
	l, err := s.describe(ctx, p, []domain.Project{pr})
	if err != nil {
		return Listed{}, err
	}
	return l[0], nil
}

// UpdateProject replaces a project's name, sandbox and (when sent)
// environment; owner only. A sandbox change stays at the same destination
// (409: the files do not travel). A change of environment or of what runs
// moves the runtime generation — the container is replaced at the next use
// — and severs the project's terminals. Returns not_found, validation,
// conflict.
func (s *Service) UpdateProject(ctx context.Context, p domain.Principal, id string, in ProjectInput) (Listed, error) {
	var out domain.Project
	var retired bool
	actx, rec := audit.Stage(ctx, s.d.Clock.Now(), "project.update", audit.Object{Kind: "project", ID: id})
	err := s.d.Store.InProjectTx(actx, func(tx ports.ProjectTx) error {
		before, err := tx.FindProject(ctx, id)
		if err != nil {
			return err
		}
		if err := before.CheckOwner(p); err != nil {
			return err
		}
		if in.Revision != nil && *in.Revision != before.Revision {
			return errs.E(errs.Conflict, "the project is at revision %d, not %d: re-read and retry", before.Revision, *in.Revision)
		}
		pr := before
		if retired, err = s.applyProject(ctx, tx, &pr, in, &before); err != nil {
			return err
		}
		pr.Revision, pr.UpdatedAt = before.Revision+1, s.d.Clock.Now()
		if retired {
			pr.Generation++
		}
		out = pr
		audit.Changed(rec, pr.Name, before, pr)
		return tx.UpdateProject(ctx, pr)
	})
	if err != nil {
		return Listed{}, err
	}
	if retired {
		s.sever(id)
	}
	l, err := s.describe(ctx, p, []domain.Project{out})
	if err != nil {
		return Listed{}, err
	}
	return l[0], nil
}

// applyProject validates in and writes it into pr. It reports whether the
// change retires the running instance (environment or content changed).
func (s *Service) applyProject(ctx context.Context, tx ports.ProjectTx, pr *domain.Project, in ProjectInput, before *domain.Project) (bool, error) {
	var f errs.FieldErrors
	env := pr.Env
	if in.Env != nil {
		env = *in.Env
	}
	if err := f.Merge("", domain.ValidateProject(in.Name, env)); err != nil {
		return false, err
	}
	sandboxID := in.SandboxID
	if sandboxID == "" && before != nil {
		sandboxID = before.SandboxID
	}
	var sb domain.Sandbox
	var err error
	if sandboxID == "" {
		f.Add("sandbox_id", "is required")
	} else if sb, err = tx.FindSandbox(ctx, sandboxID); errs.Is(err, errs.NotFound) {
		f.Add("sandbox_id", "no such sandbox")
	} else if err != nil {
		return false, err
	} else if _, err := s.backend(sb); err != nil {
		f.Add("sandbox_id", "%s", errs.MessageOf(err))
	}
	if err := f.Err(); err != nil {
		return false, err
	}
	retire := false
	if before != nil && sandboxID != before.SandboxID {
		old, err := tx.FindSandbox(ctx, before.SandboxID)
		if err != nil {
			return false, err
		}
		if old.Destination() != sb.Destination() {
			return false, errs.E(errs.Conflict, "sandbox %q keeps its files elsewhere: a project moves only between sandboxes of one destination (export it and create a new one)", sb.Name)
		}
		retire = old.Content() != sb.Content()
	}
	if in.Env != nil {
		sealed, changed, err := s.sealEnv(pr.ID, *in.Env, pr.Env)
		if err != nil {
			return false, err
		}
		pr.Env = sealed
		retire = retire || (before != nil && changed)
	}
	pr.Name, pr.SandboxID = strings.TrimSpace(in.Name), sandboxID
	return retire, nil
}

// sealEnv seals incoming values (the mask keeps the stored value of the
// same name) and reports whether the environment differs from stored.
func (s *Service) sealEnv(projectID string, incoming, stored []domain.EnvVar) ([]domain.EnvVar, bool, error) {
	old := map[string]string{}
	for _, v := range stored {
		old[v.Name] = v.Value
	}
	oldPlain, newPlain := map[string]string{}, map[string]string{}
	out := make([]domain.EnvVar, 0, len(incoming))
	for i, v := range incoming {
		if v.Value == secrets.Mask {
			kept, ok := old[v.Name]
			if !ok {
				return nil, false, errs.Field(fmt.Sprintf("env[%d].value", i), "%s has no stored value to keep: send the value", v.Name)
			}
			out = append(out, domain.EnvVar{Name: v.Name, Value: kept})
			plain, err := s.d.Box.Open(envPlace(projectID, v.Name), kept)
			if err != nil {
				return nil, false, err
			}
			newPlain[v.Name] = plain
			continue
		}
		sealed, err := s.d.Box.Seal(envPlace(projectID, v.Name), v.Value)
		if err != nil {
			return nil, false, err
		}
		out = append(out, domain.EnvVar{Name: v.Name, Value: sealed})
		newPlain[v.Name] = v.Value
	}
	for _, v := range stored {
		plain, err := s.d.Box.Open(envPlace(projectID, v.Name), v.Value)
		if err != nil {
			return nil, false, err
		}
		oldPlain[v.Name] = plain
	}
	return out, !maps.Equal(oldPlain, newPlain), nil
}

// DeleteResult is what a project delete reports: the row is gone; a
// storage error names storage left for the operator.
type DeleteResult struct {
	StorageError string
}

// DeleteProject removes a project no session binds (owner or admin) and
// then its container and volume. Returns not_found or conflict.
func (s *Service) DeleteProject(ctx context.Context, p domain.Principal, id string) (DeleteResult, error) {
	var pr domain.Project
	var sb domain.Sandbox
	actx, rec := audit.Stage(ctx, s.d.Clock.Now(), "project.delete", audit.Object{Kind: "project", ID: id})
	err := s.d.Store.InProjectTx(actx, func(tx ports.ProjectTx) error {
		var err error
		if pr, err = tx.FindProject(ctx, id); err != nil {
			return err
		}
		rec.ObjectName = pr.Name
		if err := pr.CheckManage(p); err != nil {
			return err
		}
		counts, err := tx.SessionCounts(ctx, []string{id})
		if err != nil {
			return err
		}
		if n := counts[id]; n > 0 {
			return errs.E(errs.Conflict, "%d session(s) bind this project: delete them first", n)
		}
		if sb, err = tx.FindSandbox(ctx, pr.SandboxID); err != nil {
			return err
		}
		return tx.DeleteProject(ctx, id)
	})
	if err != nil {
		return DeleteResult{}, err
	}
	s.sever(id)
	s.forget(id)
	res := DeleteResult{}
	rt, err := s.backend(sb)
	where := fmt.Sprintf("the project's tree on %s sandbox %q", sb.Type, sb.Name)
	if err == nil {
		var in ports.ProjectInstance
		if in, err = s.instance(pr, sb); err == nil {
			where = rt.Where(in)
			err = rt.Destroy(context.WithoutCancel(ctx), in)
		}
	}
	if err != nil {
		res.StorageError = fmt.Sprintf("%s was not removed: %s", where, errs.MessageOf(err))
		s.d.Log.Warn("project storage left behind", "project_id", id, "err", err)
	}
	return res, nil
}
