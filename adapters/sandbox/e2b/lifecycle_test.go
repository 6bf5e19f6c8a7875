package e2b

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/agents-server/agents-server/adapters/sandbox/e2b/e2bdouble"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/api"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/filesystem"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/filesystem/filesystemconnect"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func mustEnsure(t *testing.T, f *fixture, in ports.ProjectInstance) {
	t.Helper()
	if err := f.rt.Ensure(ctxT(t), in); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
}

// TestTheSandboxIsRecordedSecureAndTagged: the first Ensure creates one
// secure sandbox of the template, records its id before anything uses it,
// tags it with the project and the row, and sends the configured headers
// on both planes; a second Ensure reuses it.
func TestTheSandboxIsRecordedSecureAndTagged(t *testing.T) {
	t.Parallel()
	f := newFixture(t, e2bdouble.Options{Templates: []string{"base"}, RequireHeaders: map[string]string{"X-Tenant": "acme"}})
	tenant := "acme"
	target := f.target(func(c *domain.E2BConfig) { c.Headers = map[string]*string{"X-Tenant": &tenant} })
	in := f.instance(t, target)
	mustEnsure(t, f, in)
	boxes := f.double.Sandboxes()
	if len(boxes) != 1 {
		t.Fatalf("%d sandboxes after Ensure, want 1", len(boxes))
	}
	sb := boxes[0]
	if got := f.refs.get(in.ProjectID); got != sb.ID {
		t.Errorf("recorded ref = %q, want %q", got, sb.ID)
	}
	if sb.Token == "" || sb.Template != "base" || sb.Metadata[metaProject] != in.ProjectID || sb.Metadata[metaSandbox] != "sb-test" {
		t.Errorf("sandbox = %+v: want secure, of template base, tagged with the project and the row", sb)
	}
	var out bytes.Buffer
	code, err := f.rt.Exec(ctxT(t), in, ports.ExecRequest{Cmd: []string{"sh", "-c", `printf %s "$PROJECT_VAR"`}, Stdout: &out})
	if err != nil || code != 0 || out.String() != "from the project" {
		t.Errorf("Exec with the project's env = %d, %q, %v", code, out.String(), err)
	}
	mustEnsure(t, f, in)
	if n := len(f.double.Sandboxes()); n != 1 {
		t.Errorf("a second Ensure left %d sandboxes, want the same one", n)
	}
	if err := f.rt.Rebuild(ctxT(t), in); !errs.Is(err, errs.Validation) || !strings.Contains(errs.MessageOf(err), "export") {
		t.Errorf("Rebuild = %v, want validation naming the way out", err)
	}
	if err := f.rt.Destroy(ctxT(t), in); err != nil {
		t.Fatal(err)
	}
	if n := len(f.double.Sandboxes()); n != 0 || f.refs.get(in.ProjectID) != "" {
		t.Errorf("after Destroy: %d sandboxes, ref %q; want none", n, f.refs.get(in.ProjectID))
	}
}

// TestTheDaemonRefusesAWrongToken: the daemon answers only calls carrying
// its sandbox's token.
func TestTheDaemonRefusesAWrongToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t, e2bdouble.Options{})
	in := f.instance(t, f.target())
	mustEnsure(t, f, in)
	sb := f.double.Sandboxes()[0]
	base := "https://49983-" + sb.ID + "." + f.double.Domain()
	stat := func(token string) error {
		hc := &http.Client{Transport: withHeaders{base: f.double.Client().Transport, h: http.Header{"X-Access-Token": {token}}}}
		_, err := filesystemconnect.NewFilesystemClient(hc, base).Stat(ctxT(t), connect.NewRequest(&filesystem.StatRequest{Path: "/workspace"}))
		return err
	}
	if err := stat(sb.Token); err != nil {
		t.Fatalf("the right token: %v", err)
	}
	for _, token := range []string{"", "wrong", sb.Token + "x"} {
		if err := stat(token); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Errorf("token %q: %v, want unauthenticated", token, err)
		}
	}
	// The backend itself, told to send the API key instead, is refused too.
	key := f.target(func(c *domain.E2BConfig) { c.DataPlaneAuth = "api_key" })
	other := in
	other.Target = key
	f.rt.disconnect(in.ProjectID)
	mustEnsure(t, f, other)
	if _, err := f.rt.ReadFile(ctxT(t), other, "/workspace", 10); !errs.Is(err, errs.Upstream) || !strings.Contains(errs.MessageOf(err), "credentials") {
		t.Errorf("the daemon with the API key instead of its token = %v, want upstream naming the credentials", err)
	}
}

// TestAnExpiredLeasePausesAndTheNextUseResumes: with auto_pause the lease
// running out pauses the sandbox (files kept), the next Ensure connects it
// with the lease refreshed; use refreshes the lease before it runs out.
func TestAnExpiredLeasePausesAndTheNextUseResumes(t *testing.T) {
	t.Parallel()
	clk := porttest.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	f := newFixture(t, e2bdouble.Options{Now: clk.Now})
	in := f.instance(t, f.target(func(c *domain.E2BConfig) { c.TimeoutSeconds = 60 }))
	mustEnsure(t, f, in)
	if err := f.rt.WriteFile(ctxT(t), in, "/workspace/kept.txt", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	id := f.double.Sandboxes()[0].ID
	before, _ := f.double.Sandbox(id)
	// Used after half the lease: the lease is refreshed.
	clk.Advance(30 * time.Second)
	if _, err := f.rt.ReadFile(ctxT(t), in, "/workspace/kept.txt", 10); err != nil {
		t.Fatal(err)
	}
	if after, _ := f.double.Sandbox(id); !after.EndAt.After(before.EndAt) {
		t.Errorf("use after half the lease left it ending at %v (was %v)", after.EndAt, before.EndAt)
	}
	clk.Advance(2 * time.Minute)
	f.double.Sweep()
	if sb, _ := f.double.Sandbox(id); sb.State != "paused" {
		t.Fatalf("after the lease ran out the sandbox is %q, want paused", sb.State)
	}
	if st, err := f.rt.State(ctxT(t), in); err != nil || st != ports.SandboxStopped {
		t.Errorf("State of a paused sandbox = %q, %v; want stopped", st, err)
	}
	mustEnsure(t, f, in)
	sb, _ := f.double.Sandbox(id)
	if sb.State != "running" || !sb.EndAt.After(clk.Now()) {
		t.Errorf("after Ensure the sandbox is %q ending %v; want running with a fresh lease", sb.State, sb.EndAt)
	}
	if got, err := f.rt.ReadFile(ctxT(t), in, "/workspace/kept.txt", 10); err != nil || string(got) != "kept" {
		t.Errorf("after the resume the file reads %q, %v", got, err)
	}
	if n := len(f.double.Sandboxes()); n != 1 {
		t.Errorf("%d sandboxes, want the one resumed", n)
	}
}

// TestAnExpiredLeaseWithoutAutoPauseLosesTheTree: auto_pause false kills
// the sandbox when the lease runs out; the next use gets a new one,
// recorded in place of the old.
func TestAnExpiredLeaseWithoutAutoPauseLosesTheTree(t *testing.T) {
	t.Parallel()
	clk := porttest.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	f := newFixture(t, e2bdouble.Options{Now: clk.Now})
	no := false
	in := f.instance(t, f.target(func(c *domain.E2BConfig) { c.TimeoutSeconds = 60; c.AutoPause = &no }))
	mustEnsure(t, f, in)
	first := f.refs.get(in.ProjectID)
	if err := f.rt.WriteFile(ctxT(t), in, "/workspace/lost.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Minute)
	f.double.Sweep()
	if st, err := f.rt.State(ctxT(t), in); err != nil || st != ports.SandboxAbsent {
		t.Errorf("State of a killed sandbox = %q, %v; want absent", st, err)
	}
	mustEnsure(t, f, in)
	second := f.refs.get(in.ProjectID)
	if second == "" || second == first {
		t.Errorf("the ref moved from %q to %q; want a new sandbox recorded", first, second)
	}
	if _, err := f.rt.ReadFile(ctxT(t), in, "/workspace/lost.txt", 10); !errs.Is(err, errs.NotFound) {
		t.Errorf("the file of a killed sandbox reads %v, want not_found", err)
	}
}

// TestASandboxNobodyRecordedIsAdopted: a sandbox tagged with the project
// but never recorded (its creator died in between) is adopted, not
// duplicated.
func TestASandboxNobodyRecordedIsAdopted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, e2bdouble.Options{})
	in := f.instance(t, f.target())
	c, _ := configOf(in.Target)
	cl, _ := f.rt.control(c)
	yes, timeout := true, int32(300)
	meta := api.SandboxMetadata{metaProject: in.ProjectID, metaSandbox: "sb-test"}
	res, err := cl.PostSandboxesWithResponse(ctxT(t), api.NewSandbox{TemplateID: "base", Secure: &yes, Timeout: &timeout, Metadata: &meta})
	if err != nil || res.JSON201 == nil {
		t.Fatalf("create: %v %s", err, res.Body)
	}
	mustEnsure(t, f, in)
	if got := f.refs.get(in.ProjectID); got != res.JSON201.SandboxID {
		t.Errorf("recorded %q, want the orphan %q adopted", got, res.JSON201.SandboxID)
	}
	if n := len(f.double.Sandboxes()); n != 1 {
		t.Errorf("%d sandboxes, want the orphan alone", n)
	}
}

// TestTestTellsRefusalsFromAnUnreachableService: an unknown template
// ran-but-failed with the service's words; a refused API key and a closed
// port are upstream errors (the key named, never shown); a good config
// echoes ok and leaves nothing behind.
func TestTestTellsRefusalsFromAnUnreachableService(t *testing.T) {
	t.Parallel()
	f := newFixture(t, e2bdouble.Options{Templates: []string{"base"}})
	ctx := ctxT(t)
	if ok, out, err := f.rt.Test(ctx, f.target()); !ok || strings.TrimSpace(out) != "ok" || err != nil {
		t.Errorf("Test = %v, %q, %v", ok, out, err)
	}
	if n := len(f.double.Sandboxes()); n != 0 {
		t.Errorf("Test left %d sandboxes", n)
	}
	ok, out, err := f.rt.Test(ctx, f.target(func(c *domain.E2BConfig) { c.APIKey = "e2b_wrong" }))
	if msg := errs.MessageOf(err); ok || !errs.Is(err, errs.Upstream) || !strings.Contains(msg, "API key") || strings.Contains(msg, "e2b_wrong") {
		t.Errorf("Test with a bad key = %v, %q, %v; want upstream naming the key, not showing it", ok, out, err)
	}
	ok, out, err = f.rt.Test(ctx, f.target(func(c *domain.E2BConfig) { c.TemplateID = "nope" }))
	if ok || err != nil || !strings.Contains(out, "nope") {
		t.Errorf("Test with an unknown template = %v, %q, %v", ok, out, err)
	}
	// A service that lets in only callers with its own header refuses
	// the rest as forbidden: refused credentials too.
	tenant := newFixture(t, e2bdouble.Options{Templates: []string{"base"}, RequireHeaders: map[string]string{"X-Tenant": "acme"}})
	if ok, out, err := tenant.rt.Test(ctx, tenant.target()); ok || !errs.Is(err, errs.Upstream) || !strings.Contains(errs.MessageOf(err), "403") {
		t.Errorf("Test refused with 403 = %v, %q, %v; want upstream", ok, out, err)
	}
	_, _, err = f.rt.Test(ctx, f.target(func(c *domain.E2BConfig) { c.APIURL = "http://127.0.0.1:1" }))
	if !errs.Is(err, errs.Upstream) || !strings.Contains(errs.MessageOf(err), "cannot reach") {
		t.Errorf("Test of a closed port = %v, want upstream", err)
	}
}
