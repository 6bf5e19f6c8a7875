package e2b

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"connectrpc.com/connect"

	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/api"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/filesystem"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Ensure implements ports.SandboxBackend: the recorded sandbox is
// connected (a paused one resumes) with its lease refreshed; a project
// without one — or whose sandbox the service no longer has — gets a new
// sandbox, recorded before it is used. The generation is not a reason to
// replace anything here: the environment rides every command, and what a
// resume cannot re-apply is frozen while projects exist.
func (r *Runtime) Ensure(ctx context.Context, in ports.ProjectInstance) error {
	c, err := configOf(in.Target)
	if err != nil {
		return err
	}
	m := r.lock(in.ProjectID)
	m.Lock()
	defer m.Unlock()
	ref := r.refOf(in)
	if ref == "" {
		// A sandbox created by a server that died before recording it is
		// found by its tags and adopted rather than left billing.
		if ref, err = r.adopt(ctx, c, in); err != nil {
			return err
		}
		if ref != "" {
			if _, err := r.o.Refs.SwapInstanceRef(ctx, in.ProjectID, in.InstanceRef, ref); err != nil {
				return err
			}
			in.InstanceRef = ref
		}
	}
	if ref != "" {
		live, err := r.connect(ctx, c, ref)
		if err == nil {
			r.remember(in.ProjectID, live)
			return nil
		}
		if !errs.Is(err, errs.NotFound) {
			return err
		}
		// Killed, or expired without auto_pause: its tree went with it.
		r.o.Log.Warn("a project's e2b sandbox is gone; creating a new one (its files are lost)", "project_id", in.ProjectID, "sandbox", ref)
		r.forget(in.ProjectID)
	}
	return r.create(ctx, c, in, ref)
}

// refOf is the project's sandbox id: the one this process had last, else
// the one recorded.
func (r *Runtime) refOf(in ports.ProjectInstance) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id := r.known[in.ProjectID]; id != "" {
		return id
	}
	return in.InstanceRef
}

// connect resumes (when paused) a sandbox and refreshes its lease.
func (r *Runtime) connect(ctx context.Context, c config, id string) (*conn, error) {
	cl, err := r.control(c)
	if err != nil {
		return nil, err
	}
	res, err := cl.PostSandboxesSandboxIDConnectWithResponse(ctx, id, api.ConnectSandbox{Timeout: c.timeout})
	if err != nil {
		return nil, c.unreachable(err, "connecting e2b sandbox %s", id)
	}
	sb := res.JSON200
	if sb == nil {
		sb = res.JSON201
	}
	if sb == nil {
		return nil, c.answered(res.HTTPResponse, res.Body, "connecting e2b sandbox %s", id)
	}
	return r.dialSandbox(c, sb)
}

// create makes a new sandbox for the project, records it in place of old
// and prepares /workspace. A sandbox that cannot be recorded is killed:
// one nobody knows about would bill forever.
func (r *Runtime) create(ctx context.Context, c config, in ports.ProjectInstance, old string) error {
	live, err := r.createSandbox(ctx, c, map[string]string{metaProject: in.ProjectID, metaSandbox: c.sandboxID}, c.timeout, c.autoPause)
	if err != nil {
		return err
	}
	swapped, err := r.o.Refs.SwapInstanceRef(ctx, in.ProjectID, old, live.id)
	if err == nil && !swapped {
		err = errs.E(errs.Conflict, "another server recorded this project's sandbox at the same moment: retry")
	}
	if err != nil {
		r.kill(context.WithoutCancel(ctx), c, live.id)
		return err
	}
	r.remember(in.ProjectID, live)
	if _, err := live.fs.MakeDir(ctx, connect.NewRequest(&filesystem.MakeDirRequest{Path: workspaceDir})); err != nil &&
		connect.CodeOf(err) != connect.CodeAlreadyExists {
		return c.daemonFail(ctx, err, "creating %s in e2b sandbox %s", workspaceDir, live.id)
	}
	return nil
}

// createSandbox asks the service for a secure sandbox of the template.
func (r *Runtime) createSandbox(ctx context.Context, c config, meta map[string]string, timeout int32, autoPause bool) (*conn, error) {
	cl, err := r.control(c)
	if err != nil {
		return nil, err
	}
	secure := true
	md := api.SandboxMetadata(meta)
	res, err := cl.PostSandboxesWithResponse(ctx, api.NewSandbox{TemplateID: c.template, Timeout: &timeout, AutoPause: &autoPause,
		Secure: &secure, AllowInternetAccess: &c.allowInternet, Metadata: &md})
	if err != nil {
		return nil, c.unreachable(err, "creating an e2b sandbox of template %s", c.template)
	}
	if res.JSON201 == nil {
		err := c.answered(res.HTTPResponse, res.Body, "creating an e2b sandbox of template %s", c.template)
		if errs.Is(err, errs.NotFound) {
			// A missing template is the config's fault, not a missing
			// instance's.
			return nil, errs.Wrap(errs.Upstream, err, "%s", errs.MessageOf(err))
		}
		return nil, err
	}
	return r.dialSandbox(c, res.JSON201)
}

// adopt finds a sandbox tagged with the project (running or paused).
func (r *Runtime) adopt(ctx context.Context, c config, in ports.ProjectInstance) (string, error) {
	found, err := r.list(ctx, c, metaProject, in.ProjectID, api.Running, api.Paused)
	if err != nil || len(found) == 0 {
		return "", err
	}
	return found[0].SandboxID, nil
}

// list pages through the sandboxes whose metadata key is value, in the
// given states.
func (r *Runtime) list(ctx context.Context, c config, key, value string, states ...api.SandboxState) ([]api.ListedSandbox, error) {
	cl, err := r.control(c)
	if err != nil {
		return nil, err
	}
	q := url.Values{key: {value}}.Encode()
	limit := int32(100)
	params := &api.GetV2SandboxesParams{Metadata: &q, State: &states, Limit: &limit}
	var out []api.ListedSandbox
	for page := 0; page < 100; page++ {
		res, err := cl.GetV2SandboxesWithResponse(ctx, params)
		if err != nil {
			return nil, c.unreachable(err, "listing e2b sandboxes")
		}
		if res.JSON200 == nil {
			return nil, c.answered(res.HTTPResponse, res.Body, "listing e2b sandboxes")
		}
		out = append(out, *res.JSON200...)
		next := res.HTTPResponse.Header.Get("X-Next-Token")
		if next == "" {
			break
		}
		params.NextToken = &next
	}
	return out, nil
}

// State implements ports.SandboxBackend. A sandbox the service calls
// running counts as running only when its daemon answers /health.
func (r *Runtime) State(ctx context.Context, in ports.ProjectInstance) (ports.SandboxState, error) {
	c, err := configOf(in.Target)
	if err != nil {
		return "", err
	}
	ref := r.refOf(in)
	if ref == "" {
		return ports.SandboxAbsent, nil
	}
	cl, err := r.control(c)
	if err != nil {
		return "", err
	}
	res, err := cl.GetSandboxesSandboxIDWithResponse(ctx, ref)
	if err != nil {
		return "", c.unreachable(err, "reading e2b sandbox %s", ref)
	}
	if res.StatusCode() == http.StatusNotFound {
		return ports.SandboxAbsent, nil
	}
	if res.JSON200 == nil {
		return "", c.answered(res.HTTPResponse, res.Body, "reading e2b sandbox %s", ref)
	}
	if res.JSON200.State != api.Running {
		return ports.SandboxStopped, nil
	}
	token := ""
	if res.JSON200.EnvdAccessToken != nil {
		token = *res.JSON200.EnvdAccessToken
	}
	live, err := r.dial(c, ref, token, res.JSON200.Domain)
	if err != nil {
		return "", err
	}
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	h, err := live.files.GetHealth(hctx)
	if err != nil {
		return ports.SandboxStopped, nil
	}
	_ = h.Body.Close()
	if h.StatusCode >= 500 {
		return ports.SandboxStopped, nil
	}
	return ports.SandboxRunning, nil
}

// Stop implements ports.SandboxBackend: the sandbox is paused, its files
// kept; stopping a paused or missing one is no error.
func (r *Runtime) Stop(ctx context.Context, in ports.ProjectInstance) error {
	c, err := configOf(in.Target)
	if err != nil {
		return err
	}
	m := r.lock(in.ProjectID)
	m.Lock()
	defer m.Unlock()
	ref := r.refOf(in)
	r.disconnect(in.ProjectID)
	if ref == "" {
		return nil
	}
	cl, err := r.control(c)
	if err != nil {
		return err
	}
	res, err := cl.PostSandboxesSandboxIDPauseWithResponse(ctx, ref, api.SandboxPauseRequest{})
	if err != nil {
		return c.unreachable(err, "pausing e2b sandbox %s", ref)
	}
	switch res.StatusCode() {
	case http.StatusNoContent, http.StatusOK, http.StatusConflict, http.StatusNotFound:
		return nil
	}
	return c.answered(res.HTTPResponse, res.Body, "pausing e2b sandbox %s", ref)
}

// Destroy implements ports.SandboxBackend: the project's sandbox is
// killed — the recorded one and any other tagged with the project — and
// the record cleared.
func (r *Runtime) Destroy(ctx context.Context, in ports.ProjectInstance) error {
	c, err := configOf(in.Target)
	if err != nil {
		return err
	}
	m := r.lock(in.ProjectID)
	m.Lock()
	defer m.Unlock()
	recorded := r.refOf(in)
	ids := map[string]bool{}
	for _, id := range []string{recorded, in.InstanceRef} {
		if id != "" {
			ids[id] = true
		}
	}
	tagged, err := r.list(ctx, c, metaProject, in.ProjectID, api.Running, api.Paused)
	if err != nil {
		return err
	}
	for _, s := range tagged {
		ids[s.SandboxID] = true
	}
	for id := range ids {
		if err := r.kill(ctx, c, id); err != nil {
			return err
		}
	}
	r.forget(in.ProjectID)
	if recorded != "" {
		// The project row may be gone already (a delete reclaims after).
		if _, err := r.o.Refs.SwapInstanceRef(ctx, in.ProjectID, recorded, ""); err != nil && !errs.Is(err, errs.NotFound) {
			return err
		}
	}
	return nil
}

// kill deletes a sandbox; a missing one is no error.
func (r *Runtime) kill(ctx context.Context, c config, id string) error {
	cl, err := r.control(c)
	if err != nil {
		return err
	}
	res, err := cl.DeleteSandboxesSandboxIDWithResponse(ctx, id)
	if err != nil {
		return c.unreachable(err, "killing e2b sandbox %s", id)
	}
	if res.StatusCode() == http.StatusNoContent || res.StatusCode() == http.StatusOK || res.StatusCode() == http.StatusNotFound {
		return nil
	}
	return c.answered(res.HTTPResponse, res.Body, "killing e2b sandbox %s", id)
}

// Running implements ports.SandboxBackend: the projects whose sandboxes
// (created for this row) run now.
func (r *Runtime) Running(ctx context.Context, t ports.SandboxTarget) ([]string, error) {
	c, err := configOf(t)
	if err != nil {
		return nil, err
	}
	found, err := r.list(ctx, c, metaSandbox, t.SandboxID, api.Running)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range found {
		if s.Metadata != nil && (*s.Metadata)[metaProject] != "" {
			out = append(out, (*s.Metadata)[metaProject])
		}
	}
	return out, nil
}

// Test implements ports.SandboxBackend: a throw-away sandbox runs
// `echo ok` and is killed. The service refusing the sandbox itself (an
// unknown template, a quota) is "ran but failed", with its words; the
// service refusing the API key (401, 403), or the daemon its credentials,
// is upstream, as is not reaching either: the credentials never got as far
// as running anything.
func (r *Runtime) Test(ctx context.Context, t ports.SandboxTarget) (bool, string, error) {
	c, err := configOf(t)
	if err != nil {
		return false, "", err
	}
	live, err := r.createSandbox(ctx, c, map[string]string{metaTest: "1", metaSandbox: t.SandboxID}, 120, false)
	if refused(err) {
		return false, errs.MessageOf(err), nil
	}
	if err != nil {
		return false, "", err
	}
	defer func() {
		if err := r.kill(context.WithoutCancel(ctx), c, live.id); err != nil {
			r.o.Log.Warn("killing the test sandbox failed", "sandbox", live.id, "err", err)
		}
	}()
	var out outBuf
	code, err := live.exec(ctx, nil, ports.ExecRequest{Cmd: []string{"echo", "ok"}, WorkDir: "/", Stdout: &out, Stderr: &out})
	if refused(err) || errs.Is(err, errs.NotFound) {
		return false, errs.MessageOf(err), nil
	}
	if err != nil {
		return false, "", err
	}
	return code == 0, out.String(), nil
}

// refused reports whether err is the service's answer refusing the call
// (a 4xx), not a failure to reach it nor its refusal of the API key.
func refused(err error) bool {
	var se *serviceError
	return errors.As(err, &se) && se.Status < 500 &&
		se.Status != http.StatusUnauthorized && se.Status != http.StatusForbidden
}
