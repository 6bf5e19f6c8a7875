package sandboxes_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/sandboxes"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/ports"
)

func env(kv ...string) *[]domain.EnvVar {
	out := []domain.EnvVar{}
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, domain.EnvVar{Name: kv[i], Value: kv[i+1]})
	}
	return &out
}

func TestCreateProjectRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	sb := f.dockerBox(t, "local")
	f.project(t, ann, "taken", sb)
	for _, c := range []struct {
		name   string
		in     sandboxes.ProjectInput
		code   errs.Code
		fields []string
	}{
		{"no name, no sandbox", sandboxes.ProjectInput{}, errs.Validation, []string{"name", "sandbox_id"}},
		{"an unknown sandbox", sandboxes.ProjectInput{Name: "x", SandboxID: "nope"}, errs.Validation, []string{"sandbox_id"}},
		{"a bad env name", sandboxes.ProjectInput{Name: "x", SandboxID: sb.ID, Env: env("1BAD", "v")}, errs.Validation, []string{"env[0].name"}},
		{"an env name twice", sandboxes.ProjectInput{Name: "x", SandboxID: sb.ID, Env: env("A", "1", "A", "2")}, errs.Validation, []string{"env[1].name"}},
		{"a mask with nothing stored", sandboxes.ProjectInput{Name: "x", SandboxID: sb.ID, Env: env("A", secrets.Mask)}, errs.Validation, []string{"env[0].value"}},
		{"the owner's name in another case", sandboxes.ProjectInput{Name: "TAKEN", SandboxID: sb.ID}, errs.Conflict, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.svc.CreateProject(context.Background(), ann, c.in)
			wantErr(t, err, c.code, "")
			for _, field := range c.fields {
				wantErr(t, err, c.code, field)
			}
		})
	}
	// Another owner may use the name.
	if _, err := f.svc.CreateProject(context.Background(), bob, sandboxes.ProjectInput{Name: "taken", SandboxID: sb.ID}); err != nil {
		t.Errorf("bob's project of the same name: %v", err)
	}
}

func TestProjectsArePersonal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sb := f.dockerBox(t, "local")
	p := f.project(t, ann, " site ", sb, domain.EnvVar{Name: "API_TOKEN", Value: "s3cret"})
	if p.Name != "site" || p.Revision != 1 || p.Generation != 1 || p.OwnerID != ann.User.ID || p.SessionCount != 0 || p.StorageHint != "" {
		t.Fatalf("created = %+v", p)
	}
	if v := p.Env[0].Value; v == "s3cret" || !strings.HasPrefix(v, "enc:") {
		t.Errorf("the env value is stored as %q, want it sealed", v)
	}

	// The owner and admins see it; admins with where its files live.
	if got, err := f.svc.GetProject(ctx, ann, p.ID); err != nil || got.StorageHint != "" {
		t.Errorf("owner's view = %+v, %v", got, err)
	}
	got, err := f.svc.GetProject(ctx, admin, p.ID)
	if err != nil || !strings.Contains(got.StorageHint, "agents-proj-") {
		t.Errorf("admin's view = %+v, %v", got, err)
	}
	_, err = f.svc.GetProject(ctx, bob, p.ID)
	wantErr(t, err, errs.NotFound, "")
	_, err = f.svc.GetProject(ctx, ann, "missing")
	wantErr(t, err, errs.NotFound, "")
	// Using it (bind, terminal, export) is the owner's alone.
	if _, err := f.svc.OwnProject(ctx, ann, p.ID); err != nil {
		t.Error(err)
	}
	_, err = f.svc.OwnProject(ctx, admin, p.ID)
	wantErr(t, err, errs.NotFound, "")

	f.project(t, bob, "bobs", sb)
	names := func(list []sandboxes.Listed) string {
		var out []string
		for _, l := range list {
			out = append(out, l.Name)
		}
		return strings.Join(out, ",")
	}
	if mine, _ := f.svc.ListProjects(ctx, ann, false); names(mine) != "site" {
		t.Errorf("ann lists %q", names(mine))
	}
	_, err = f.svc.ListProjects(ctx, ann, true)
	wantErr(t, err, errs.Forbidden, "")
	all, err := f.svc.ListProjects(ctx, admin, true)
	if err != nil || names(all) != "bobs,site" || all[0].StorageHint == "" {
		t.Errorf("admin lists %q (newest first, with hints), %v", names(all), err)
	}

	// A storage hint for a row whose type has no backend names the row.
	d := f.deps
	d.Backends = map[string]ports.SandboxBackend{}
	if got, _ := sandboxes.New(d).GetProject(ctx, admin, p.ID); got.StorageHint != `docker sandbox "local"` {
		t.Errorf("hint without a backend = %q", got.StorageHint)
	}
}

func TestUpdateProject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sb := f.dockerBox(t, "local")
	far := f.dockerBox(t, "far", "image", "img:1", "host", "tcp://far:2375")
	twin := f.dockerBox(t, "twin", "image", "img:1")
	bigger := f.dockerBox(t, "bigger", "image", "img:1", "memory_mb", 1024)
	p := f.project(t, ann, "site", sb, domain.EnvVar{Name: "API_TOKEN", Value: "s3cret"}, domain.EnvVar{Name: "MODE", Value: "dev"})
	term, err := f.svc.Acquire(ctx, p.ID, sandboxes.ForTerminal)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Release()

	update := func(who domain.Principal, in sandboxes.ProjectInput) (sandboxes.Listed, error) {
		return f.svc.UpdateProject(ctx, who, p.ID, in)
	}
	_, err = update(admin, sandboxes.ProjectInput{Name: "admin's"})
	wantErr(t, err, errs.NotFound, "")
	_, err = update(bob, sandboxes.ProjectInput{Name: "bob's"})
	wantErr(t, err, errs.NotFound, "")
	_, err = f.svc.UpdateProject(ctx, ann, "missing", sandboxes.ProjectInput{Name: "x"})
	wantErr(t, err, errs.NotFound, "")
	stale := int64(5)
	_, err = update(ann, sandboxes.ProjectInput{Name: "x", Revision: &stale})
	wantErr(t, err, errs.Conflict, "")
	_, err = update(ann, sandboxes.ProjectInput{Name: ""})
	wantErr(t, err, errs.Validation, "name")

	steps := []struct {
		name    string
		in      sandboxes.ProjectInput
		gen     int64
		severed bool
	}{
		{"a rename (sandbox kept)", sandboxes.ProjectInput{Name: "site2"}, 1, false},
		{"the masks sent back", sandboxes.ProjectInput{Name: "site2", Env: env("API_TOKEN", secrets.Mask, "MODE", secrets.Mask)}, 1, false},
		{"a move to a sandbox of the same content", sandboxes.ProjectInput{Name: "site2", SandboxID: twin.ID}, 1, false},
		{"a changed value", sandboxes.ProjectInput{Name: "site2", Env: env("API_TOKEN", secrets.Mask, "MODE", "prod")}, 2, true},
		{"a move to other content", sandboxes.ProjectInput{Name: "site2", SandboxID: bigger.ID}, 3, true},
	}
	rev := int64(1)
	for _, s := range steps {
		if !s.severed && severed(term) {
			t.Fatalf("before %s the terminal is already severed", s.name)
		}
		got, err := update(ann, s.in)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		rev++
		if got.Generation != s.gen || got.Revision != rev || severed(term) != s.severed {
			t.Fatalf("%s: generation %d revision %d severed %v; want %d %d %v", s.name, got.Generation, got.Revision, severed(term), s.gen, rev, s.severed)
		}
		if s.severed {
			term.Release()
			if term, err = f.svc.Acquire(ctx, p.ID, sandboxes.ForTerminal); err != nil {
				t.Fatal(err)
			}
		}
	}

	// The files do not travel: another destination is refused.
	_, err = update(ann, sandboxes.ProjectInput{Name: "site2", SandboxID: far.ID})
	wantErr(t, err, errs.Conflict, "")
	// A mask under a name with nothing stored is refused by field.
	_, err = update(ann, sandboxes.ProjectInput{Name: "site2", Env: env("OTHER", secrets.Mask)})
	wantErr(t, err, errs.Validation, "env[0].value")

	// What the instance is created with is the plaintext.
	term.Release()
	lease, err := f.svc.Acquire(ctx, p.ID, sandboxes.ForRun)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	ensures := f.docker.Calls("Ensure")
	last := ensures[len(ensures)-1].In
	if last.Env["API_TOKEN"] != "s3cret" || last.Env["MODE"] != "prod" || last.Generation != 3 || last.Target.SandboxID != bigger.ID {
		t.Errorf("the backend ensured %+v", last)
	}
}

func TestBindOnceAndDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sb := f.dockerBox(t, "local")
	p := f.project(t, ann, "site", sb)
	other := f.project(t, ann, "other", sb)
	bobs := f.project(t, bob, "bobs", sb)
	f.session(t, ann, "s1", "")

	for name, id := range map[string]string{"bob's project": bobs.ID, "a missing project": "missing"} {
		_, _, err := f.svc.Bind(ctx, ann, "s1", id)
		wantErr(t, err, errs.Validation, "project_id")
		if s, _ := f.sessions.FindSession(ctx, "s1"); s.ProjectID != "" {
			t.Errorf("%s left the session bound to %q", name, s.ProjectID)
		}
	}
	if bound, won, err := f.svc.Bind(ctx, ann, "s1", p.ID); bound != p.ID || !won || err != nil {
		t.Fatalf("first bind = %q %v %v", bound, won, err)
	}
	if bound, won, err := f.svc.Bind(ctx, ann, "s1", other.ID); bound != p.ID || won || err != nil {
		t.Fatalf("second bind = %q %v %v: the first project stays", bound, won, err)
	}
	if got, _ := f.svc.GetProject(ctx, ann, p.ID); got.SessionCount != 1 {
		t.Errorf("session count = %d", got.SessionCount)
	}

	// Deleting: never under a bound session; owner or admin; storage goes.
	_, err := f.svc.DeleteProject(ctx, ann, p.ID)
	wantErr(t, err, errs.Conflict, "")
	_, err = f.svc.DeleteProject(ctx, bob, other.ID)
	wantErr(t, err, errs.NotFound, "")
	_, err = f.svc.DeleteProject(ctx, ann, "missing")
	wantErr(t, err, errs.NotFound, "")

	term, err := f.svc.Acquire(ctx, other.ID, sandboxes.ForTerminal)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.DeleteProject(ctx, admin, other.ID)
	if err != nil || res.StorageError != "" {
		t.Fatalf("admin's delete = %+v, %v", res, err)
	}
	if !severed(term) {
		t.Error("the deleted project's terminal is still open")
	}
	term.Release()
	if d := f.docker.Calls("Destroy"); len(d) != 1 || d[0].In.ProjectID != other.ID {
		t.Errorf("destroyed %+v", d)
	}
	_, err = f.svc.GetProject(ctx, ann, other.ID)
	wantErr(t, err, errs.NotFound, "")

	// Storage that will not go is reported, the row gone all the same.
	f.docker.Fail = func(op string, _ ports.ProjectInstance) error {
		if op == "Destroy" {
			return errs.E(errs.Upstream, "the daemon is down")
		}
		return nil
	}
	res, err = f.svc.DeleteProject(ctx, bob, bobs.ID)
	if err != nil || !strings.Contains(res.StorageError, "fake storage") || !strings.Contains(res.StorageError, "the daemon is down") {
		t.Fatalf("delete with a failing destroy = %+v, %v", res, err)
	}
	if !strings.Contains(f.log.String(), "project storage left behind") {
		t.Errorf("nothing logged: %s", f.log.String())
	}
	// And on a server with no backend for the type, it names the row.
	lone := f.project(t, bob, "lone", sb)
	d := f.deps
	d.Backends = map[string]ports.SandboxBackend{}
	res, err = sandboxes.New(d).DeleteProject(ctx, bob, lone.ID)
	if err != nil || !strings.Contains(res.StorageError, `docker sandbox "local"`) {
		t.Errorf("delete without a backend = %+v, %v", res, err)
	}
}
