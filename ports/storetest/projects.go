package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// ProjectStores is one database as the project contract uses it.
type ProjectStores struct {
	Projects ports.ProjectStore
	HostKeys ports.SSHHostKeyStore
	Refs     ports.InstanceRefStore
	// NewOwner stores a user who may own projects and sessions and
	// returns their id.
	NewOwner func(t *testing.T, name string) string
	// NewSession stores a session of owner with that id, bound to no
	// project.
	NewSession func(t *testing.T, id, owner string)
}

// projectEpoch is when the project contract's rows happen: a time with a
// sub-millisecond part in another zone, as a clock hands it out.
var projectEpoch = time.Date(2026, 12, 1, 12, 0, 0, 250_000, time.FixedZone("CET", 3600))

// Projects is the contract of ports.ProjectStore, ports.SSHHostKeyStore
// and ports.InstanceRefStore over sandboxes and projects: names unique
// case aside (ASCII; sandboxes across all, projects per owner; conflict),
// a project only on a sandbox that exists and a sandbox deleted only
// with no project on it (conflict), updates as compare-and-sets on the
// revision (conflict, a missing row included) that never write the pin,
// the owner, the creation time or the instance ref, listings (sandboxes
// by name case aside, projects by id), one bind per session, host keys
// pinned once per sandbox and host, instance refs swapped only from the
// value held, a failed transaction that writes nothing, copies on read
// and UTC millisecond times. open returns an empty database.
func Projects(t *testing.T, open func(t *testing.T) ProjectStores) {
	t.Run("sandboxes", func(t *testing.T) { projectsSandboxes(t, open(t)) })
	t.Run("projects", func(t *testing.T) { projectsRows(t, open(t)) })
	t.Run("a transaction", func(t *testing.T) { projectsTx(t, open(t)) })
	t.Run("binding sessions", func(t *testing.T) { projectsBind(t, open(t)) })
	t.Run("host keys", func(t *testing.T) { projectsHostKeys(t, open(t)) })
	t.Run("instance refs", func(t *testing.T) { projectsRefs(t, open(t)) })
}

func dockerSandbox(id, name, host string) domain.Sandbox {
	return domain.Sandbox{ID: id, Name: name, Type: domain.SandboxDocker, Revision: 1, Prompt: "p-" + id, CreatedAt: projectEpoch, UpdatedAt: projectEpoch,
		Docker: &domain.DockerConfig{Host: host, Image: "img-" + id, MemoryMB: 512}}
}

func newProject(id, owner, name, sandboxID string) domain.Project {
	return domain.Project{ID: id, OwnerID: owner, Name: name, SandboxID: sandboxID, Revision: 1, Generation: 1,
		Env: []domain.EnvVar{{Name: "A", Value: "sealed-a"}}, CreatedAt: projectEpoch, UpdatedAt: projectEpoch}
}

// projectWrite runs fn in a transaction of its own.
func projectWrite(s ProjectStores, fn func(ctx context.Context, tx ports.ProjectTx) error) error {
	ctx := context.Background()
	return s.Projects.InProjectTx(ctx, func(tx ports.ProjectTx) error { return fn(ctx, tx) })
}

func mustProjectWrite(t *testing.T, s ProjectStores, fn func(ctx context.Context, tx ports.ProjectTx) error) {
	t.Helper()
	if err := projectWrite(s, fn); err != nil {
		t.Fatal(err)
	}
}

func findSandbox(t *testing.T, s ProjectStores, id string) domain.Sandbox {
	t.Helper()
	sb, err := s.Projects.FindSandbox(context.Background(), id)
	if err != nil {
		t.Fatalf("find sandbox %s: %v", id, err)
	}
	return sb
}

func findProject(t *testing.T, s ProjectStores, id string) domain.Project {
	t.Helper()
	p, err := s.Projects.FindProject(context.Background(), id)
	if err != nil {
		t.Fatalf("find project %s: %v", id, err)
	}
	return p
}

func projectsSandboxes(t *testing.T, s ProjectStores) {
	ctx := context.Background()
	insert := func(sb domain.Sandbox) error {
		return projectWrite(s, func(ctx context.Context, tx ports.ProjectTx) error { return tx.InsertSandbox(ctx, sb) })
	}
	update := func(sb domain.Sandbox) error {
		return projectWrite(s, func(ctx context.Context, tx ports.ProjectTx) error { return tx.UpdateSandbox(ctx, sb) })
	}
	if list, err := s.Projects.ListSandboxes(ctx); err != nil || list == nil || len(list) != 0 {
		t.Fatalf("no sandboxes yet: %#v, %v; want an empty, non-nil list", list, err)
	}
	box := dockerSandbox("sb1", "gamma", "ssh://u@h")
	if err := insert(box); err != nil {
		t.Fatal(err)
	}
	want := box
	want.CreatedAt, want.UpdatedAt = storedAt(projectEpoch), storedAt(projectEpoch)
	if got := findSandbox(t, s, "sb1"); !reflect.DeepEqual(got, want) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got, want)
	}
	// A read is the caller's copy.
	copied := findSandbox(t, s, "sb1")
	copied.Docker.Image = "changed"
	if got := findSandbox(t, s, "sb1"); got.Docker.Image != "img-sb1" {
		t.Fatalf("a caller's change to a read reached the store: %q", got.Docker.Image)
	}
	e2b := domain.Sandbox{ID: "sb2", Name: "alpha", Type: domain.SandboxE2B, Revision: 1, CreatedAt: projectEpoch, UpdatedAt: projectEpoch,
		E2B: &domain.E2BConfig{TemplateID: "tpl", TimeoutSeconds: 60}}
	if err := insert(e2b); err != nil {
		t.Fatal(err)
	}
	if got := findSandbox(t, s, "sb2"); got.Docker != nil || got.E2B == nil || got.E2B.TemplateID != "tpl" || got.E2B.TimeoutSeconds != 60 {
		t.Fatalf("an e2b sandbox read back as %+v", got)
	}
	for _, c := range []struct {
		what string
		sb   domain.Sandbox
	}{
		{"a taken name in another case", dockerSandbox("sb9", "GAMMA", "")},
		{"a taken id", dockerSandbox("sb1", "other", "")},
	} {
		if err := insert(c.sb); errs.CodeOf(err) != errs.Conflict {
			t.Fatalf("%s: %v, want conflict", c.what, err)
		}
	}
	if err := insert(dockerSandbox("sb3", "Beta", "")); err != nil {
		t.Fatal(err)
	}
	list, err := s.Projects.ListSandboxes(ctx)
	if err != nil || len(list) != 3 || list[0].ID != "sb2" || list[1].ID != "sb3" || list[2].ID != "sb1" {
		t.Fatalf("the sandboxes by name, case aside (alpha, Beta, gamma) = %+v, %v", list, err)
	}
	if _, err := s.Projects.FindSandbox(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a missing sandbox: %v, want not_found", err)
	}

	// Updates compare and set the revision; a missing row is a conflict
	// too. The creation time stays.
	edit := findSandbox(t, s, "sb1")
	edit.Revision, edit.Prompt, edit.Name, edit.CreatedAt, edit.UpdatedAt = 2, "be nice", "Gamma", projectEpoch.Add(time.Hour), projectEpoch.Add(time.Hour)
	if err := update(edit); err != nil {
		t.Fatal(err)
	}
	if err := update(edit); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a stale revision: %v, want conflict", err)
	}
	got := findSandbox(t, s, "sb1")
	if got.Revision != 2 || got.Prompt != "be nice" || got.Name != "Gamma" || !got.UpdatedAt.Equal(storedAt(projectEpoch.Add(time.Hour))) ||
		!got.CreatedAt.Equal(storedAt(projectEpoch)) {
		t.Fatalf("after an update = %+v", got)
	}
	taken := findSandbox(t, s, "sb3")
	taken.Revision, taken.Name = 2, "ALPHA"
	if err := update(taken); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a rename onto a taken name: %v, want conflict", err)
	}
	if got := findSandbox(t, s, "sb3"); got.Name != "Beta" || got.Revision != 1 {
		t.Fatalf("a refused rename was stored: %+v", got)
	}
	gone := dockerSandbox("nope", "nope", "")
	gone.Revision = 2
	if err := update(gone); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("updating a missing sandbox: %v, want conflict", err)
	}

	// A sandbox goes only with no project on it.
	owner := s.NewOwner(t, "sandbox-owner")
	mustProjectWrite(t, s, func(ctx context.Context, tx ports.ProjectTx) error {
		return tx.InsertProject(ctx, newProject("p1", owner, "proj", "sb3"))
	})
	del := func(id string) error {
		return projectWrite(s, func(ctx context.Context, tx ports.ProjectTx) error { return tx.DeleteSandbox(ctx, id) })
	}
	if err := del("sb3"); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("deleting a sandbox a project lives on: %v, want conflict", err)
	}
	findSandbox(t, s, "sb3")
	mustProjectWrite(t, s, func(ctx context.Context, tx ports.ProjectTx) error { return tx.DeleteProject(ctx, "p1") })
	if err := del("sb3"); err != nil {
		t.Fatal(err)
	}
	if err := del("sb3"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("deleting a sandbox twice: %v, want not_found", err)
	}
	if err := insert(dockerSandbox("sb4", "BETA", "")); err != nil {
		t.Fatalf("a deleted sandbox's name taken again: %v", err)
	}
}

func projectsRows(t *testing.T, s ProjectStores) {
	ctx := context.Background()
	ann, bob := s.NewOwner(t, "proj-ann"), s.NewOwner(t, "proj-bob")
	mustProjectWrite(t, s, func(ctx context.Context, tx ports.ProjectTx) error {
		if err := tx.InsertSandbox(ctx, dockerSandbox("sb1", "one", "")); err != nil {
			return err
		}
		return tx.InsertSandbox(ctx, dockerSandbox("sb2", "two", ""))
	})
	insert := func(p domain.Project) error {
		return projectWrite(s, func(ctx context.Context, tx ports.ProjectTx) error { return tx.InsertProject(ctx, p) })
	}
	update := func(p domain.Project) error {
		return projectWrite(s, func(ctx context.Context, tx ports.ProjectTx) error { return tx.UpdateProject(ctx, p) })
	}
	p1 := newProject("p1", ann, "Proj", "sb1")
	p1.InstanceRef = "i-1"
	if err := insert(p1); err != nil {
		t.Fatal(err)
	}
	want := p1
	want.CreatedAt, want.UpdatedAt = storedAt(projectEpoch), storedAt(projectEpoch)
	if got := findProject(t, s, "p1"); !reflect.DeepEqual(got, want) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got, want)
	}
	copied := findProject(t, s, "p1")
	copied.Env[0].Value = "changed"
	if got := findProject(t, s, "p1"); got.Env[0].Value != "sealed-a" {
		t.Fatalf("a caller's change to a read reached the store: %+v", got.Env)
	}
	bare := newProject("p2", bob, "proj", "sb2")
	bare.Env = []domain.EnvVar{}
	if err := insert(bare); err != nil {
		t.Fatalf("another owner's project of the same name: %v", err)
	}
	if got := findProject(t, s, "p2"); got.Env != nil {
		t.Fatalf("no environment reads back as %#v, want nil", got.Env)
	}
	for _, c := range []struct {
		what string
		p    domain.Project
	}{
		{"the owner's name in another case", newProject("p9", ann, "PROJ", "sb1")},
		{"a taken id", newProject("p1", bob, "other", "sb1")},
		{"a missing sandbox", newProject("p9", ann, "other", "nope")},
	} {
		if err := insert(c.p); errs.CodeOf(err) != errs.Conflict {
			t.Fatalf("%s: %v, want conflict", c.what, err)
		}
	}
	if err := insert(newProject("p3", ann, "third", "sb1")); err != nil {
		t.Fatal(err)
	}
	ids := func(list []domain.Project, err error) []string {
		t.Helper()
		if err != nil || list == nil {
			t.Fatalf("list = %#v, %v; want a non-nil list", list, err)
		}
		out := []string{}
		for _, p := range list {
			out = append(out, p.ID)
		}
		return out
	}
	for _, c := range []struct {
		what string
		got  []string
		want []string
	}{
		{"ann's projects, newest first", ids(s.Projects.ListProjects(ctx, ann)), []string{"p3", "p1"}},
		{"every project, newest first", ids(s.Projects.ListProjects(ctx, "")), []string{"p3", "p2", "p1"}},
		{"no one's projects", ids(s.Projects.ListProjects(ctx, "nobody")), []string{}},
		{"the projects on sb1, by id", ids(s.Projects.ProjectsOnSandbox(ctx, "sb1")), []string{"p1", "p3"}},
		{"the projects on no sandbox", ids(s.Projects.ProjectsOnSandbox(ctx, "nope")), []string{}},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Fatalf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	if _, err := s.Projects.FindProject(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a missing project: %v, want not_found", err)
	}

	// An update compares and sets the revision and stores the name,
	// sandbox, environment, generation and update time; never the owner,
	// creation time or instance ref.
	edit := findProject(t, s, "p1")
	later := projectEpoch.Add(time.Hour)
	edit.Revision, edit.Name, edit.SandboxID, edit.Env, edit.Generation, edit.UpdatedAt = 2, "renamed", "sb2", nil, 5, later
	edit.OwnerID, edit.CreatedAt, edit.InstanceRef = bob, later, "forged"
	if err := update(edit); err != nil {
		t.Fatal(err)
	}
	if err := update(edit); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a stale revision: %v, want conflict", err)
	}
	got := findProject(t, s, "p1")
	if got.Revision != 2 || got.Name != "renamed" || got.SandboxID != "sb2" || got.Env != nil || got.Generation != 5 || !got.UpdatedAt.Equal(storedAt(later)) {
		t.Fatalf("the update was not stored: %+v", got)
	}
	if got.OwnerID != ann || !got.CreatedAt.Equal(storedAt(projectEpoch)) || got.InstanceRef != "i-1" {
		t.Fatalf("an update moved the owner, creation time or instance ref: %+v", got)
	}
	for _, c := range []struct {
		what string
		edit func(p *domain.Project)
	}{
		{"a rename onto the owner's taken name", func(p *domain.Project) { p.Name = "RENAMED" }},
		{"a move to a missing sandbox", func(p *domain.Project) { p.SandboxID = "nope" }},
		{"an update of a missing project", func(p *domain.Project) { p.ID = "nope" }},
	} {
		p := findProject(t, s, "p3")
		p.Revision++
		c.edit(&p)
		if err := update(p); errs.CodeOf(err) != errs.Conflict {
			t.Fatalf("%s: %v, want conflict", c.what, err)
		}
	}
	if got := findProject(t, s, "p3"); got.Revision != 1 || got.Name != "third" || got.SandboxID != "sb1" {
		t.Fatalf("a refused update was stored: %+v", got)
	}

	// A bump moves the generation of the sandbox's projects only.
	mustProjectWrite(t, s, func(ctx context.Context, tx ports.ProjectTx) error { return tx.BumpGenerations(ctx, "sb2") })
	for id, gen := range map[string]int64{"p1": 6, "p2": 2, "p3": 1} {
		if got := findProject(t, s, id); got.Generation != gen {
			t.Fatalf("%s's generation after a bump of sb2 = %d, want %d", id, got.Generation, gen)
		}
	}

	del := func(id string) error {
		return projectWrite(s, func(ctx context.Context, tx ports.ProjectTx) error { return tx.DeleteProject(ctx, id) })
	}
	if err := del("p3"); err != nil {
		t.Fatal(err)
	}
	if err := del("p3"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("deleting a project twice: %v, want not_found", err)
	}
	if err := insert(newProject("p4", ann, "Third", "sb1")); err != nil {
		t.Fatalf("a deleted project's name taken again: %v", err)
	}
}

// projectsTx: a transaction reads its own writes, and one that fails
// writes nothing.
func projectsTx(t *testing.T, s ProjectStores) {
	ctx := context.Background()
	owner := s.NewOwner(t, "tx-owner")
	boom := errors.New("boom")
	err := projectWrite(s, func(ctx context.Context, tx ports.ProjectTx) error {
		if err := tx.InsertSandbox(ctx, dockerSandbox("sb1", "one", "")); err != nil {
			return err
		}
		if err := tx.InsertProject(ctx, newProject("p1", owner, "proj", "sb1")); err != nil {
			return err
		}
		if _, err := tx.FindSandbox(ctx, "sb1"); err != nil {
			t.Errorf("a transaction does not read its own sandbox: %v", err)
		}
		if list, err := tx.ProjectsOnSandbox(ctx, "sb1"); err != nil || len(list) != 1 {
			t.Errorf("a transaction does not list its own project: %+v, %v", list, err)
		}
		if _, err := s.Projects.FindSandbox(ctx, "sb1"); errs.CodeOf(err) != errs.NotFound {
			t.Errorf("a read outside the transaction saw its write before the commit: %v", err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("the failed transaction returned %v", err)
	}
	if _, err := s.Projects.FindSandbox(ctx, "sb1"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a failed transaction's sandbox: %v, want not_found", err)
	}
	if list, _ := s.Projects.ListProjects(ctx, ""); len(list) != 0 {
		t.Fatalf("a failed transaction's projects: %+v", list)
	}
}

// projectsBind: a session binds the first project it is bound to, once;
// a failed transaction's bind is undone; racers are all told the winner.
func projectsBind(t *testing.T, s ProjectStores) {
	ctx := context.Background()
	owner := s.NewOwner(t, "bind-owner")
	projects := make([]string, Racers)
	mustProjectWrite(t, s, func(ctx context.Context, tx ports.ProjectTx) error {
		if err := tx.InsertSandbox(ctx, dockerSandbox("sb1", "one", "")); err != nil {
			return err
		}
		for i := range projects {
			projects[i] = fmt.Sprintf("p%02d", i)
			if err := tx.InsertProject(ctx, newProject(projects[i], owner, projects[i], "sb1")); err != nil {
				return err
			}
		}
		return nil
	})
	p0, p1, p2 := projects[0], projects[1], projects[2]
	bind := func(sessionID, projectID string) (bound string, won bool, err error) {
		err = projectWrite(s, func(ctx context.Context, tx ports.ProjectTx) error {
			bound, won, err = tx.BindSession(ctx, sessionID, projectID)
			return err
		})
		return bound, won, err
	}
	counts := func(ids ...string) map[string]int {
		t.Helper()
		n, err := s.Projects.SessionCounts(ctx, ids)
		if err != nil || n == nil {
			t.Fatalf("session counts = %v, %v", n, err)
		}
		return n
	}
	if n := counts(); len(n) != 0 {
		t.Fatalf("the counts of no projects = %v", n)
	}
	s.NewSession(t, "s1", owner)
	for _, step := range []struct {
		project   string
		wantBound string
		wantWon   bool
	}{
		{p0, p0, true},  // the first bind wins
		{p1, p0, false}, // another project does not replace it
		{p0, p0, false}, // binding again is not a second win
	} {
		bound, won, err := bind("s1", step.project)
		if err != nil || bound != step.wantBound || won != step.wantWon {
			t.Fatalf("bind %s = %q, %v, %v; want %q, %v", step.project, bound, won, err, step.wantBound, step.wantWon)
		}
	}
	if n := counts(p0, p1); !reflect.DeepEqual(n, map[string]int{p0: 1}) {
		t.Fatalf("session counts = %v, want %s: 1 and no others", n, p0)
	}
	if _, won, err := bind("nope", p1); errs.CodeOf(err) != errs.NotFound || won {
		t.Fatalf("binding a missing session: %v, %v; want not_found", won, err)
	}

	// A bind in a transaction that then fails is undone; the transaction
	// counts its own bind.
	s.NewSession(t, "s2", owner)
	boom := errors.New("the check after the bind failed")
	err := projectWrite(s, func(ctx context.Context, tx ports.ProjectTx) error {
		if _, won, err := tx.BindSession(ctx, "s2", p1); err != nil || !won {
			t.Errorf("bind in a transaction = %v, %v", won, err)
		}
		if n, err := tx.SessionCounts(ctx, []string{p1}); err != nil || n[p1] != 1 {
			t.Errorf("the transaction does not count its own bind: %v, %v", n, err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("the failed transaction returned %v", err)
	}
	if n := counts(p1); n[p1] != 0 {
		t.Fatalf("a rolled-back bind counts: %v", n)
	}
	if bound, won, err := bind("s2", p2); err != nil || !won || bound != p2 {
		t.Fatalf("a bind after the rollback = %q, %v, %v", bound, won, err)
	}

	// Racers binding one session to a project each: one wins, and every
	// caller is told the project it bound.
	for round := range 5 {
		id := fmt.Sprintf("race-%d", round)
		s.NewSession(t, id, owner)
		bound := make([]string, Racers)
		won := make([]bool, Racers)
		failures := make([]error, Racers)
		Race(Racers, func(i int) { bound[i], won[i], failures[i] = bind(id, projects[i]) })
		winner := -1
		for i := range Racers {
			if failures[i] != nil {
				t.Fatalf("round %d: caller %d: %v", round, i, failures[i])
			}
			if won[i] && winner >= 0 {
				t.Fatalf("round %d: callers %d and %d both bound the session", round, winner, i)
			}
			if won[i] {
				winner = i
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody bound the session", round)
		}
		for i, b := range bound {
			if b != projects[winner] {
				t.Fatalf("round %d: caller %d was told %q, the winner bound %q", round, i, b, projects[winner])
			}
		}
	}
}

// projectsHostKeys: a host key is pinned once per sandbox and host; only
// a reset moves it, and neither an edit nor a pin moves the revision.
func projectsHostKeys(t *testing.T, s ProjectStores) {
	ctx := context.Background()
	const host = "ssh://me@box:22"
	mustProjectWrite(t, s, func(ctx context.Context, tx ports.ProjectTx) error {
		if err := tx.InsertSandbox(ctx, dockerSandbox("sb1", "remote", host)); err != nil {
			return err
		}
		return tx.InsertSandbox(ctx, domain.Sandbox{ID: "sb2", Name: "cloud", Type: domain.SandboxE2B, Revision: 1, E2B: &domain.E2BConfig{},
			CreatedAt: projectEpoch, UpdatedAt: projectEpoch})
	})
	if got := findSandbox(t, s, "sb1"); !got.SSHHostKey.IsZero() || got.SSHHostKey != (domain.SSHHostKey{}) {
		t.Fatalf("a new sandbox has a pin: %+v", got.SSHHostKey)
	}
	first := domain.SSHHostKey{Key: "ssh-ed25519 AAAAFirst", PinnedAt: projectEpoch.Add(time.Minute)}
	second := domain.SSHHostKey{Key: "ssh-ed25519 AAAASecond", PinnedAt: projectEpoch.Add(time.Hour)}
	want := domain.SSHHostKey{Key: first.Key, PinnedAt: storedAt(first.PinnedAt)}
	pin := func(id, host string, k domain.SSHHostKey) (domain.SSHHostKey, error) {
		return s.HostKeys.PinSSHHostKey(ctx, id, host, k)
	}
	if _, err := pin("sb1", "ssh://me@elsewhere:22", first); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a pin for another host: %v, want conflict", err)
	}
	if _, err := pin("sb2", host, first); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a pin for a sandbox that is not docker: %v, want conflict", err)
	}
	if _, err := pin("nope", host, first); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a pin for no sandbox: %v, want not_found", err)
	}
	// Racers presenting different keys: all are told the one pinned.
	told := make([]domain.SSHHostKey, Racers)
	failures := make([]error, Racers)
	Race(Racers, func(i int) {
		k := first
		if i > 0 {
			k.Key = fmt.Sprintf("ssh-ed25519 AAAARacer%02d", i)
		}
		told[i], failures[i] = pin("sb1", host, k)
	})
	for i := range Racers {
		if failures[i] != nil || told[i] != told[0] {
			t.Fatalf("racer %d was told %+v, %v; racer 0 %+v", i, told[i], failures[i], told[0])
		}
	}
	want.Key = told[0].Key
	if told[0] != want {
		t.Fatalf("the pin = %+v, want %+v (UTC milliseconds)", told[0], want)
	}
	if got, err := pin("sb1", host, second); err != nil || got != want {
		t.Fatalf("a second key = %+v, %v; want the pin %+v", got, err, want)
	}
	// An edit neither moves nor clears the pin, whatever it carries; the
	// pin moved no revision.
	edit := findSandbox(t, s, "sb1")
	if edit.SSHHostKey != want || edit.Revision != 1 {
		t.Fatalf("the sandbox after the pin = %+v", edit)
	}
	edit.Revision, edit.SSHHostKey, edit.Docker.Image = 2, domain.SSHHostKey{}, "other"
	mustProjectWrite(t, s, func(ctx context.Context, tx ports.ProjectTx) error { return tx.UpdateSandbox(ctx, edit) })
	if list, _ := s.Projects.ListSandboxes(ctx); len(list) != 2 || list[1].ID != "sb1" || list[1].SSHHostKey != want || list[1].Revision != 2 {
		t.Fatalf("after an edit = %+v", list)
	}
	// A reset forgets it, moving no revision; the next key met is pinned.
	mustProjectWrite(t, s, func(ctx context.Context, tx ports.ProjectTx) error { return tx.ClearSSHHostKey(ctx, "sb1") })
	if got := findSandbox(t, s, "sb1"); got.SSHHostKey != (domain.SSHHostKey{}) || got.Revision != 2 {
		t.Fatalf("after a reset = %+v", got)
	}
	if got, err := pin("sb1", host, second); err != nil || got != (domain.SSHHostKey{Key: second.Key, PinnedAt: storedAt(second.PinnedAt)}) {
		t.Fatalf("a pin after a reset = %+v, %v", got, err)
	}
	if err := projectWrite(s, func(ctx context.Context, tx ports.ProjectTx) error { return tx.ClearSSHHostKey(ctx, "nope") }); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a reset of no sandbox: %v, want not_found", err)
	}
}

// projectsRefs: an instance ref moves only from the value it holds.
func projectsRefs(t *testing.T, s ProjectStores) {
	ctx := context.Background()
	owner := s.NewOwner(t, "ref-owner")
	mustProjectWrite(t, s, func(ctx context.Context, tx ports.ProjectTx) error {
		if err := tx.InsertSandbox(ctx, dockerSandbox("sb1", "one", "")); err != nil {
			return err
		}
		return tx.InsertProject(ctx, newProject("p1", owner, "proj", "sb1"))
	})
	swap := func(old, next string, want bool) {
		t.Helper()
		if ok, err := s.Refs.SwapInstanceRef(ctx, "p1", old, next); ok != want || err != nil {
			t.Fatalf("swap %q → %q = %v, %v; want %v", old, next, ok, err, want)
		}
	}
	swap("", "sbx-1", true)
	swap("", "sbx-2", false) // a racing recorder that read no ref
	if got := findProject(t, s, "p1"); got.InstanceRef != "sbx-1" || got.Revision != 1 {
		t.Fatalf("the project after a swap = %+v", got)
	}
	swap("sbx-1", "", true)
	if _, err := s.Refs.SwapInstanceRef(ctx, "nope", "", "x"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a swap on a missing project: %v, want not_found", err)
	}
}
