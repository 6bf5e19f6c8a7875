package e2b

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/agents-server/agents-server/adapters/sandbox/e2b/e2bdouble"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/internal/testenv"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

func TestMain(m *testing.M) {
	e2bdouble.RunHelperIfAsked()
	os.Exit(m.Run())
}

const testKey = "e2b_0123456789abcdef"

// refs records the instances the backend creates: the project fake
// (which keeps the SQL store's project contract, instance refs included)
// holding the test's sandbox and the projects it names.
type refs struct{ *porttest.ProjectStore }

func newRefs(t testing.TB) *refs {
	t.Helper()
	r := &refs{&porttest.ProjectStore{}}
	ctx := context.Background()
	sb := domain.Sandbox{ID: "sb-test", Name: "sb-test", Type: domain.SandboxE2B, Revision: 1, E2B: &domain.E2BConfig{}}
	if err := r.InProjectTx(ctx, func(tx ports.ProjectTx) error { return tx.InsertSandbox(ctx, sb) }); err != nil {
		t.Fatal(err)
	}
	return r
}

// add stores a project on the test's sandbox, with no instance yet.
func (r *refs) add(t testing.TB, projectID string) {
	t.Helper()
	ctx := context.Background()
	p := domain.Project{ID: projectID, OwnerID: "tester", Name: projectID, SandboxID: "sb-test", Revision: 1, Generation: 1}
	if err := r.InProjectTx(ctx, func(tx ports.ProjectTx) error { return tx.InsertProject(ctx, p) }); err != nil {
		t.Fatal(err)
	}
}

// get is the instance ref recorded for a project.
func (r *refs) get(projectID string) string {
	p, err := r.FindProject(context.Background(), projectID)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return p.InstanceRef
}

// fixture is a double, a backend talking to it and the refs it records.
type fixture struct {
	double *e2bdouble.Double
	rt     *Runtime
	refs   *refs
}

// newFixture starts a double (skipping, or failing under AGENTS_CI=1,
// where its processes cannot have a mount namespace) and a backend.
func newFixture(t *testing.T, o e2bdouble.Options) *fixture {
	t.Helper()
	if err := e2bdouble.Supported(); err != nil {
		testenv.Require(t, "E2B suite", err.Error(), "run the tests as root, or enable unprivileged user namespaces")
	}
	if o.APIKey == "" {
		o.APIKey = testKey
	}
	d, err := e2bdouble.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	rf := newRefs(t)
	return &fixture{double: d, refs: rf, rt: New(Options{Refs: rf, HTTP: d.Client(), Now: o.Now})}
}

// target is a sandbox row pointing at the double.
func (f *fixture) target(edit ...func(*domain.E2BConfig)) ports.SandboxTarget {
	yes := true
	c := &domain.E2BConfig{APIURL: f.double.APIURL(), Domain: f.double.Domain(), APIKey: testKey, TemplateID: "base", AutoPause: &yes}
	for _, e := range edit {
		e(c)
	}
	return ports.SandboxTarget{SandboxID: "sb-test", Type: domain.SandboxE2B, Config: c}
}

// instance names a fresh project on the target, destroyed at the end.
func (f *fixture) instance(t *testing.T, target ports.SandboxTarget) ports.ProjectInstance {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	in := ports.ProjectInstance{ProjectID: "p" + hex.EncodeToString(b), Env: map[string]string{"PROJECT_VAR": "from the project"}, Target: target}
	f.refs.add(t, in.ProjectID)
	t.Cleanup(func() {
		if err := f.rt.Destroy(context.Background(), in); err != nil && !errs.Is(err, errs.NotFound) {
			t.Errorf("Destroy: %v", err)
		}
	})
	return in
}
