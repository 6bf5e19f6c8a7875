package sandboxes_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/sandboxes"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

var (
	admin = domain.Principal{User: domain.User{ID: "admin", Username: "root", Role: domain.RoleAdmin}}
	ann   = domain.Principal{User: domain.User{ID: "ann", Username: "ann", Role: domain.RoleMember}}
	bob   = domain.Principal{User: domain.User{ID: "bob", Username: "bob", Role: domain.RoleMember}}
	t0    = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
)

// fixture is a sandboxes.Service over in-memory fakes: a docker-typed
// backend that can rebuild, no backend for e2b, a sealing secret box.
type fixture struct {
	svc      *sandboxes.Service
	deps     sandboxes.Deps
	store    *porttest.ProjectStore
	sessions *porttest.SessionStore
	docker   *porttest.Sandbox
	clock    *porttest.Clock
	settings *settings.Service
	box      *secrets.Box
	log      *porttest.Buffer
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	box, err := secrets.NewBox(bytes.Repeat([]byte{7}, secrets.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{sessions: &porttest.SessionStore{}, docker: &porttest.Sandbox{Caps: domain.SandboxSupports{Rebuild: true}},
		clock: porttest.NewClock(t0), box: box, log: &porttest.Buffer{}}
	f.store = &porttest.ProjectStore{Sessions: f.sessions}
	f.settings = settings.New(&porttest.SettingStore{}, box, f.clock)
	f.deps = sandboxes.Deps{Store: f.store, Box: box, Settings: f.settings,
		Backends:        map[string]ports.SandboxBackend{domain.SandboxDocker: f.docker},
		ContainerAdmins: map[string]ports.ContainerAdmin{domain.SandboxDocker: f.docker},
		IDs:             &porttest.IDs{}, Clock: f.clock, Log: slog.New(slog.NewTextHandler(f.log, nil))}
	f.svc = sandboxes.New(f.deps)
	return f
}

// config encodes a sandbox config object.
func config(kv ...any) json.RawMessage {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	raw, _ := json.Marshal(m)
	return raw
}

// dockerBox creates a docker sandbox (admin) or fails the test.
func (f *fixture) dockerBox(t *testing.T, name string, kv ...any) domain.Sandbox {
	t.Helper()
	if len(kv) == 0 {
		kv = []any{"image", "img:1"}
	}
	sb, err := f.svc.CreateSandbox(context.Background(), admin, sandboxes.SandboxInput{Name: name, Type: domain.SandboxDocker, Config: config(kv...)})
	if err != nil {
		t.Fatalf("create sandbox %s: %v", name, err)
	}
	return sb
}

// project creates a project of p's on sb or fails the test.
func (f *fixture) project(t *testing.T, p domain.Principal, name string, sb domain.Sandbox, env ...domain.EnvVar) sandboxes.Listed {
	t.Helper()
	in := sandboxes.ProjectInput{Name: name, SandboxID: sb.ID}
	if env != nil {
		in.Env = &env
	}
	l, err := f.svc.CreateProject(context.Background(), p, in)
	if err != nil {
		t.Fatalf("create project %s: %v", name, err)
	}
	return l
}

// session creates a session of p's and binds it to projectID when set.
func (f *fixture) session(t *testing.T, p domain.Principal, id, projectID string) {
	t.Helper()
	ctx := context.Background()
	if err := f.sessions.CreateSession(ctx, domain.Session{ID: id, OwnerID: p.User.ID}); err != nil {
		t.Fatal(err)
	}
	if projectID == "" {
		return
	}
	if _, won, err := f.svc.Bind(ctx, p, id, projectID); err != nil || !won {
		t.Fatalf("bind %s to %s: %v, %v", id, projectID, won, err)
	}
}

// wantErr fails unless err has code and, when field is set, names it.
func wantErr(t *testing.T, err error, code errs.Code, field string) {
	t.Helper()
	if !errs.Is(err, code) {
		t.Fatalf("err = %v (%s), want %s", err, errs.CodeOf(err), code)
	}
	if field != "" {
		if _, ok := errs.FieldsOf(err)[field]; !ok {
			t.Fatalf("err %v names fields %v, not %s", err, errs.FieldsOf(err), field)
		}
	}
}

func severed(l *sandboxes.Lease) bool {
	select {
	case <-l.Severed():
		return true
	default:
		return false
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
