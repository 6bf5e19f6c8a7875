package sandboxes_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/sandboxes"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/ports"
)

func TestCreateSandboxRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.dockerBox(t, "taken")
	for _, c := range []struct {
		name  string
		who   domain.Principal
		in    sandboxes.SandboxInput
		code  errs.Code
		field string
	}{
		{"a member", ann, sandboxes.SandboxInput{Name: "x", Type: "docker", Config: config("image", "i")}, errs.Forbidden, ""},
		{"no name", admin, sandboxes.SandboxInput{Name: "  ", Type: "docker", Config: config("image", "i")}, errs.Validation, "name"},
		{"two lines", admin, sandboxes.SandboxInput{Name: "a\nb", Type: "docker", Config: config("image", "i")}, errs.Validation, "name"},
		{"a long name", admin, sandboxes.SandboxInput{Name: strings.Repeat("n", 101), Type: "docker", Config: config("image", "i")}, errs.Validation, "name"},
		{"a long prompt", admin, sandboxes.SandboxInput{Name: "x", Type: "docker", Config: config("image", "i"),
			Prompt: strings.Repeat("p", sandboxes.MaxPrompt+1)}, errs.Validation, "prompt"},
		{"an unknown type", admin, sandboxes.SandboxInput{Name: "x", Type: "lxc"}, errs.Validation, "type"},
		{"no image", admin, sandboxes.SandboxInput{Name: "x", Type: "docker", Config: config()}, errs.Validation, "config.image"},
		{"a mistyped field", admin, sandboxes.SandboxInput{Name: "x", Type: "docker", Config: config("image", "i", "memory_mb", "lots")},
			errs.Validation, "config.memory_mb"},
		{"an ssh host without user", admin, sandboxes.SandboxInput{Name: "x", Type: "docker", Config: config("image", "i", "host", "ssh://h")},
			errs.Validation, "config.host"},
		{"e2b without template", admin, sandboxes.SandboxInput{Name: "x", Type: "e2b", Config: config()}, errs.Validation, "config.template_id"},
		{"a taken name in another case", admin, sandboxes.SandboxInput{Name: "TAKEN", Type: "docker", Config: config("image", "i")},
			errs.Conflict, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.svc.CreateSandbox(context.Background(), c.who, c.in)
			wantErr(t, err, c.code, c.field)
		})
	}
	// Field errors of the name and the config come together.
	_, err := f.svc.CreateSandbox(context.Background(), admin, sandboxes.SandboxInput{Type: "docker", Config: config("host", "ftp://x")})
	wantErr(t, err, errs.Validation, "name")
	wantErr(t, err, errs.Validation, "config.image")
	if list, _ := f.svc.ListSandboxes(context.Background()); len(list) != 1 {
		t.Errorf("refused creates stored rows: %+v", list)
	}
}

func TestSandboxSecretsAreSealedMaskedAndOpenedForTheBackend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sb := f.dockerBox(t, "local", "image", "img:1", "ssh_password", "hunter2", "bogus", 1)
	stored, err := f.svc.GetSandbox(ctx, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if pw := stored.Docker.SSHPassword; pw == "hunter2" || !strings.HasPrefix(pw, "enc:") {
		t.Fatalf("the password is stored as %q, want it sealed", pw)
	}
	view := sandboxes.ConfigView(stored)
	if view["ssh_password"] != secrets.Mask || view["ssh_key"] != "" || view["image"] != "img:1" || view["bogus"] != nil {
		t.Errorf("view = %v: a set secret masked, an unset one empty, unknown keys dropped", view)
	}
	if stored.Docker.SSHPassword == secrets.Mask {
		t.Error("ConfigView masked the stored row in place")
	}
	if v := sandboxes.ConfigView(domain.Sandbox{Type: "lxc"}); len(v) != 0 {
		t.Errorf("a config-less row views as %v", v)
	}

	// The backend is handed the plaintext.
	ok, out, err := f.svc.TestSandbox(ctx, admin, sb.ID)
	if !ok || out != "ok" || err != nil {
		t.Fatalf("test = %v %q %v", ok, out, err)
	}
	calls := f.docker.Calls("Test")
	if c, _ := calls[0].In.Target.Config.(*domain.DockerConfig); c == nil || c.SSHPassword != "hunter2" || calls[0].In.Target.SandboxID != sb.ID {
		t.Errorf("the backend got target %+v", calls[0].In.Target)
	}

	open := func() string {
		t.Helper()
		got, _ := f.svc.GetSandbox(ctx, sb.ID)
		plain, err := f.box.Open(secrets.Place("sandboxes", "config", "ssh_password", sb.ID), got.Docker.SSHPassword)
		if err != nil {
			t.Fatal(err)
		}
		return plain
	}
	update := func(kv ...any) error {
		_, err := f.svc.UpdateSandbox(ctx, admin, sb.ID, sandboxes.SandboxInput{Name: "local", Type: "docker", Config: config(kv...)})
		return err
	}
	// The mask keeps the stored value; a new one replaces it; "" clears it.
	if err := update("image", "img:1", "ssh_password", secrets.Mask); err != nil || open() != "hunter2" {
		t.Errorf("the mask kept %q (%v)", open(), err)
	}
	if err := update("image", "img:1", "ssh_password", "swordfish"); err != nil || open() != "swordfish" {
		t.Errorf("a new value stored %q (%v)", open(), err)
	}
	// The mask does not carry a credential to another host.
	err = update("image", "img:1", "host", "tcp://elsewhere:2375", "ssh_password", secrets.Mask)
	wantErr(t, err, errs.Validation, "config.ssh_password")
	if err := update("image", "img:1", "ssh_password", ""); err != nil || open() != "" {
		t.Errorf("clearing stored %q (%v)", open(), err)
	}
	// A mask on a create (nothing stored) keeps nothing.
	e := f.dockerBox(t, "fresh", "image", "i", "ssh_key", secrets.Mask)
	if e.Docker.SSHKey != "" {
		t.Errorf("a mask on a create stored %q", e.Docker.SSHKey)
	}
}

func TestUpdateSandboxFreezesIdentityAndRetiresProjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sb := f.dockerBox(t, "local")
	update := func(in sandboxes.SandboxInput) (domain.Sandbox, error) {
		return f.svc.UpdateSandbox(ctx, admin, sb.ID, in)
	}

	_, err := f.svc.UpdateSandbox(ctx, ann, sb.ID, sandboxes.SandboxInput{Name: "local", Config: config("image", "img:1")})
	wantErr(t, err, errs.Forbidden, "")
	_, err = f.svc.UpdateSandbox(ctx, admin, "missing", sandboxes.SandboxInput{Name: "local", Config: config("image", "img:1")})
	wantErr(t, err, errs.NotFound, "")
	stale := int64(7)
	_, err = update(sandboxes.SandboxInput{Name: "local", Config: config("image", "img:1"), Revision: &stale})
	wantErr(t, err, errs.Conflict, "")
	_, err = update(sandboxes.SandboxInput{Name: "", Config: config("image", "img:1")})
	wantErr(t, err, errs.Validation, "name")

	// Type "" keeps the stored type; the revision moves by one.
	cur := int64(1)
	got, err := update(sandboxes.SandboxInput{Name: "renamed", Config: config("image", "img:1"), Revision: &cur})
	if err != nil || got.Revision != 2 || got.Type != domain.SandboxDocker || got.Name != "renamed" {
		t.Fatalf("update = %+v, %v", got, err)
	}

	p := f.project(t, ann, "site", sb)
	term, err := f.svc.Acquire(ctx, p.ID, sandboxes.ForTerminal)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Release()
	// With a project on it, the destination is frozen, naming the count.
	_, err = update(sandboxes.SandboxInput{Name: "renamed", Config: config("image", "img:1", "host", "tcp://far:2375")})
	wantErr(t, err, errs.Conflict, "")
	if !strings.Contains(errs.MessageOf(err), "1 project(s)") {
		t.Errorf("the freeze says %q", errs.MessageOf(err))
	}
	// Neither is the type (an e2b config would not parse as docker anyway).
	_, err = update(sandboxes.SandboxInput{Name: "renamed", Type: "e2b", Config: config("template_id", "base")})
	wantErr(t, err, errs.Conflict, "")

	gen := func() int64 {
		pr, _ := f.svc.GetProject(ctx, ann, p.ID)
		return pr.Generation
	}
	// A prompt or name edit is not content: no new generation, no sever.
	if _, err := update(sandboxes.SandboxInput{Name: "again", Prompt: "be kind", Config: config("image", "img:1")}); err != nil {
		t.Fatal(err)
	}
	if gen() != 1 || severed(term) {
		t.Errorf("a prompt edit: generation %d, severed %v", gen(), severed(term))
	}
	if prompt, _ := f.svc.Prompt(ctx, p.ID); prompt != "be kind" {
		t.Errorf("prompt = %q", prompt)
	}
	// An image edit is: the project's generation moves, its terminal goes.
	if _, err := update(sandboxes.SandboxInput{Name: "again", Config: config("image", "img:2")}); err != nil {
		t.Fatal(err)
	}
	if gen() != 2 || !severed(term) {
		t.Errorf("an image edit: generation %d, severed %v", gen(), severed(term))
	}
	if n, _ := f.svc.ProjectCount(ctx, sb.ID); n != 1 {
		t.Errorf("project count = %d", n)
	}
}

func TestNewDestinationForgetsThePinnedHostKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sb := f.dockerBox(t, "remote", "image", "i", "host", "ssh://u@one")
	pin := func() {
		t.Helper()
		if _, err := f.store.PinSSHHostKey(ctx, sb.ID, "ssh://u@one", domain.SSHHostKey{Key: "ssh-ed25519 AAAA", PinnedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	pinned := func() bool {
		got, _ := f.svc.GetSandbox(ctx, sb.ID)
		return !got.SSHHostKey.IsZero()
	}
	pin()
	// Same host: the pin stays (and the update does not answer it away).
	got, err := f.svc.UpdateSandbox(ctx, admin, sb.ID, sandboxes.SandboxInput{Name: "remote", Config: config("image", "j", "host", "ssh://u@one")})
	if err != nil || got.SSHHostKey.IsZero() || !pinned() {
		t.Fatalf("same-host update: %+v, %v, pinned %v", got.SSHHostKey, err, pinned())
	}
	got, err = f.svc.UpdateSandbox(ctx, admin, sb.ID, sandboxes.SandboxInput{Name: "remote", Config: config("image", "j", "host", "ssh://u@two")})
	if err != nil || !got.SSHHostKey.IsZero() || pinned() {
		t.Fatalf("new-host update: %+v, %v, pinned %v", got.SSHHostKey, err, pinned())
	}

	wantErr(t, f.svc.ResetSSHHostKey(ctx, ann, sb.ID), errs.Forbidden, "")
	wantErr(t, f.svc.ResetSSHHostKey(ctx, admin, "missing"), errs.NotFound, "")
	if _, err := f.store.PinSSHHostKey(ctx, sb.ID, "ssh://u@two", domain.SSHHostKey{Key: "ssh-ed25519 BBBB", PinnedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.ResetSSHHostKey(ctx, admin, sb.ID); err != nil || pinned() {
		t.Errorf("reset: %v, pinned %v", err, pinned())
	}
	if err := f.svc.ResetSSHHostKey(ctx, admin, sb.ID); err != nil {
		t.Errorf("resetting nothing: %v", err)
	}
}

func TestDeleteSandbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sb := f.dockerBox(t, "local")
	p := f.project(t, ann, "site", sb)
	wantErr(t, f.svc.DeleteSandbox(ctx, ann, sb.ID), errs.Forbidden, "")
	wantErr(t, f.svc.DeleteSandbox(ctx, admin, "missing"), errs.NotFound, "")
	wantErr(t, f.svc.DeleteSandbox(ctx, admin, sb.ID), errs.Conflict, "")
	if _, err := f.svc.DeleteProject(ctx, ann, p.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.DeleteSandbox(ctx, admin, sb.ID); err != nil {
		t.Fatal(err)
	}
	_, err := f.svc.GetSandbox(ctx, sb.ID)
	wantErr(t, err, errs.NotFound, "")
}

func TestSupportsAndTypesWithoutABackend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	if got := f.svc.Supports(domain.SandboxDocker); got != (domain.SandboxSupports{Runs: true, Rebuild: true}) {
		t.Errorf("docker supports %+v: the backend's flags, and runs", got)
	}
	if got := f.svc.Supports(domain.SandboxE2B); got != (domain.SandboxSupports{PublicHost: true}) {
		t.Errorf("e2b supports %+v: the descriptor's flags, not runs", got)
	}
	if got := f.svc.Supports("lxc"); got != (domain.SandboxSupports{}) {
		t.Errorf("an unknown type supports %+v", got)
	}

	// An e2b row is validated and stored, secrets sealed, and refused by
	// name wherever something would run.
	e2b, err := f.svc.CreateSandbox(ctx, admin, sandboxes.SandboxInput{Name: "cloud", Type: "e2b", Config: config("template_id", "base", "api_key", "k")})
	if err != nil {
		t.Fatal(err)
	}
	if e2b.E2B.APIKey == "k" || *e2b.E2B.AutoPause != true {
		t.Errorf("e2b row = %+v", e2b.E2B)
	}
	if v := sandboxes.ConfigView(e2b); v["api_key"] != secrets.Mask {
		t.Errorf("e2b view = %v", v)
	}
	_, _, err = f.svc.TestSandbox(ctx, admin, e2b.ID)
	wantErr(t, err, errs.Validation, "")
	if !strings.Contains(errs.MessageOf(err), "only docker sandboxes run projects") {
		t.Errorf("the refusal says %q", errs.MessageOf(err))
	}
	_, err = f.svc.CreateProject(ctx, ann, sandboxes.ProjectInput{Name: "p", SandboxID: e2b.ID})
	wantErr(t, err, errs.Validation, "sandbox_id")
	_, err = f.svc.Containers(ctx, admin, e2b.ID)
	wantErr(t, err, errs.Validation, "")

	// A server without a docker backend refuses docker rows by name too.
	d := f.deps
	d.Backends = map[string]ports.SandboxBackend{}
	bare := sandboxes.New(d)
	sb := f.dockerBox(t, "local")
	_, _, err = bare.TestSandbox(ctx, admin, sb.ID)
	wantErr(t, err, errs.Validation, "")
	_, err = bare.Containers(ctx, admin, sb.ID)
	wantErr(t, err, errs.Validation, "")
}

func TestTestAndContainers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sb := f.dockerBox(t, "local")
	p := f.project(t, ann, "site", sb)

	_, _, err := f.svc.TestSandbox(ctx, ann, sb.ID)
	wantErr(t, err, errs.Forbidden, "")
	_, _, err = f.svc.TestSandbox(ctx, admin, "missing")
	wantErr(t, err, errs.NotFound, "")
	f.docker.TestResult = func(ports.SandboxTarget) (bool, string, error) { return false, "exec failed", nil }
	if ok, out, err := f.svc.TestSandbox(ctx, admin, sb.ID); ok || out != "exec failed" || err != nil {
		t.Errorf("a failing test = %v %q %v", ok, out, err)
	}

	_, err = f.svc.Containers(ctx, ann, sb.ID)
	wantErr(t, err, errs.Forbidden, "")
	_, err = f.svc.Containers(ctx, admin, "missing")
	wantErr(t, err, errs.NotFound, "")
	if _, err := f.svc.Start(ctx, ann, p.ID); err != nil {
		t.Fatal(err)
	}
	cs, err := f.svc.Containers(ctx, admin, sb.ID)
	if err != nil || len(cs) != 1 || cs[0].ProjectID != p.ID || cs[0].State != "running" {
		t.Fatalf("containers = %+v, %v", cs, err)
	}
	if err := f.svc.StopContainer(ctx, admin, sb.ID, cs[0].Name); err != nil {
		t.Fatal(err)
	}
	wantErr(t, f.svc.StopContainer(ctx, ann, sb.ID, cs[0].Name), errs.Forbidden, "")
	if st, _ := f.svc.State(ctx, ann, p.ID); st != ports.SandboxStopped {
		t.Errorf("state after StopContainer = %s", st)
	}
	wantErr(t, f.svc.RemoveContainer(ctx, admin, sb.ID, "not-ours"), errs.NotFound, "")
	wantErr(t, f.svc.RemoveContainer(ctx, bob, sb.ID, cs[0].Name), errs.Forbidden, "")
	if err := f.svc.RemoveContainer(ctx, admin, sb.ID, cs[0].Name); err != nil {
		t.Fatal(err)
	}
	if st, _ := f.svc.State(ctx, ann, p.ID); st != ports.SandboxAbsent {
		t.Errorf("state after RemoveContainer = %s", st)
	}
	raw, _ := json.Marshal(cs)
	if !strings.Contains(string(raw), "img:1") {
		t.Errorf("containers carry no image: %s", raw)
	}
}
