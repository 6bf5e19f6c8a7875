package e2bdouble

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"slices"
	"time"

	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/api"
)

// controlPlane implements the generated control-plane server.
type controlPlane struct{ d *Double }

var _ api.ServerInterface = (*controlPlane)(nil)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, api.Error{Code: int32(status), Message: msg})
}

func (c *controlPlane) find(w http.ResponseWriter, id string) *box {
	c.d.mu.Lock()
	b := c.d.boxes[id]
	c.d.mu.Unlock()
	if b == nil {
		writeError(w, http.StatusNotFound, "sandbox \""+id+"\" doesn't exist or you don't have access to it")
	}
	return b
}

// sandboxView is a sandbox as create and connect answer.
func (c *controlPlane) sandboxView(b *box) api.Sandbox {
	dom := c.d.o.Domain
	v := api.Sandbox{SandboxID: b.id, TemplateID: b.template, ClientID: "e2b-double", EnvdVersion: "0.2.0", Domain: &dom}
	if b.token != "" {
		tok := b.token
		v.EnvdAccessToken = &tok
	}
	return v
}

// PostSandboxes creates a sandbox.
func (c *controlPlane) PostSandboxes(w http.ResponseWriter, r *http.Request) {
	var in api.NewSandbox
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.TemplateID == "" {
		writeError(w, http.StatusBadRequest, "a templateID is required")
		return
	}
	if len(c.d.o.Templates) > 0 && !slices.Contains(c.d.o.Templates, in.TemplateID) {
		writeError(w, http.StatusBadRequest, "template '"+in.TemplateID+"' not found")
		return
	}
	timeout := int32(15)
	if in.Timeout != nil {
		timeout = *in.Timeout
	}
	meta := map[string]string{}
	if in.Metadata != nil {
		meta = *in.Metadata
	}
	b, err := c.d.newBox(in.TemplateID, in.Secure != nil && *in.Secure, in.AutoPause != nil && *in.AutoPause, meta,
		time.Duration(timeout)*time.Second)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if in.AllowInternetAccess != nil {
		b.allowInternet = *in.AllowInternetAccess
	}
	writeJSON(w, http.StatusCreated, c.sandboxView(b))
}

// DeleteSandboxesSandboxID kills a sandbox and its files.
func (c *controlPlane) DeleteSandboxesSandboxID(w http.ResponseWriter, _ *http.Request, id api.SandboxID) {
	b := c.find(w, id)
	if b == nil {
		return
	}
	b.killAll()
	_ = os.RemoveAll(b.dir)
	c.d.mu.Lock()
	delete(c.d.boxes, id)
	c.d.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// GetSandboxesSandboxID describes a sandbox.
func (c *controlPlane) GetSandboxesSandboxID(w http.ResponseWriter, _ *http.Request, id api.SandboxID) {
	b := c.find(w, id)
	if b == nil {
		return
	}
	v := c.sandboxView(b)
	meta := api.SandboxMetadata(b.meta)
	b.mu.Lock()
	detail := api.SandboxDetail{SandboxID: b.id, TemplateID: b.template, ClientID: v.ClientID, EnvdVersion: v.EnvdVersion,
		EnvdAccessToken: v.EnvdAccessToken, Domain: v.Domain, StartedAt: b.started, EndAt: b.endAt, State: b.st,
		CpuCount: 2, MemoryMB: 512, DiskSizeMB: 1024, Metadata: &meta, AllowInternetAccess: &b.allowInternet}
	b.mu.Unlock()
	writeJSON(w, http.StatusOK, detail)
}

// PostSandboxesSandboxIDConnect resumes a paused sandbox and extends its
// lease (never shortens it).
func (c *controlPlane) PostSandboxesSandboxIDConnect(w http.ResponseWriter, r *http.Request, id api.SandboxID) {
	var in api.ConnectSandbox
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "a timeout is required")
		return
	}
	b := c.find(w, id)
	if b == nil {
		return
	}
	resumed := b.resume(c.d.o.Now().Add(time.Duration(in.Timeout) * time.Second))
	status := http.StatusOK
	if resumed {
		status = http.StatusCreated
	}
	writeJSON(w, status, c.sandboxView(b))
}

// PostSandboxesSandboxIDPause pauses a running sandbox.
func (c *controlPlane) PostSandboxesSandboxIDPause(w http.ResponseWriter, _ *http.Request, id api.SandboxID) {
	b := c.find(w, id)
	if b == nil {
		return
	}
	if b.state() != api.Running {
		writeError(w, http.StatusConflict, "sandbox "+id+" is already paused")
		return
	}
	b.pause()
	w.WriteHeader(http.StatusNoContent)
}

// PostSandboxesSandboxIDTimeout sets a running sandbox's lease from now.
func (c *controlPlane) PostSandboxesSandboxIDTimeout(w http.ResponseWriter, r *http.Request, id api.SandboxID) {
	var in api.SandboxTimeoutRequest
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "a timeout is required")
		return
	}
	b := c.find(w, id)
	if b == nil {
		return
	}
	b.mu.Lock()
	b.endAt = c.d.o.Now().Add(time.Duration(in.Timeout) * time.Second)
	b.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// GetV2Sandboxes lists sandboxes by metadata and state.
func (c *controlPlane) GetV2Sandboxes(w http.ResponseWriter, _ *http.Request, params api.GetV2SandboxesParams) {
	want := url.Values{}
	if params.Metadata != nil {
		var err error
		if want, err = url.ParseQuery(*params.Metadata); err != nil {
			writeError(w, http.StatusBadRequest, "malformed metadata query")
			return
		}
	}
	c.d.mu.Lock()
	boxes := make([]*box, 0, len(c.d.boxes))
	for _, b := range c.d.boxes {
		boxes = append(boxes, b)
	}
	c.d.mu.Unlock()
	out := []api.ListedSandbox{}
	for _, b := range boxes {
		b.mu.Lock()
		ok := params.State == nil || slices.Contains(*params.State, b.st)
		for k := range want {
			ok = ok && b.meta[k] == want.Get(k)
		}
		if ok {
			meta := api.SandboxMetadata(b.meta)
			out = append(out, api.ListedSandbox{SandboxID: b.id, TemplateID: b.template, ClientID: "e2b-double", StartedAt: b.started,
				EndAt: b.endAt, State: b.st, CpuCount: 2, MemoryMB: 512, DiskSizeMB: 1024, EnvdVersion: "0.2.0", Metadata: &meta})
		}
		b.mu.Unlock()
	}
	writeJSON(w, http.StatusOK, out)
}
