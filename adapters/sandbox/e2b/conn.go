package e2b

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/api"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/envd"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/filesystem/filesystemconnect"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/process/processconnect"
)

// conn is one connected sandbox: its id, its daemon's clients and when its
// lease was last refreshed.
type conn struct {
	id    string
	cfg   config
	r     *Runtime
	proc  processconnect.ProcessClient
	fs    filesystemconnect.FilesystemClient
	files *envd.Client

	mu        sync.Mutex
	refreshed time.Time
}

// dial builds the clients of a sandbox's daemon at
// https://<port>-<id>.<domain> (the domain the service answered with, else
// the configured one).
func (r *Runtime) dial(c config, id, token string, sandboxDomain *string) (*conn, error) {
	dom := c.domain
	if sandboxDomain != nil && *sandboxDomain != "" {
		dom = *sandboxDomain
	}
	base := fmt.Sprintf("https://%d-%s.%s", envdPort, id, dom)
	transport := r.o.HTTP.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	hc := &http.Client{Transport: withHeaders{base: transport, h: c.dataPlaneHeaders(id, token)}, Jar: r.o.HTTP.Jar}
	files, err := envd.NewClient(base, envd.WithHTTPClient(hc))
	if err != nil {
		return nil, err
	}
	return &conn{id: id, cfg: c, r: r, files: files, refreshed: r.o.Now(),
		proc: processconnect.NewProcessClient(hc, base),
		fs:   filesystemconnect.NewFilesystemClient(hc, base)}, nil
}

// dialSandbox connects the clients for a sandbox the control plane
// described.
func (r *Runtime) dialSandbox(c config, sb *api.Sandbox) (*conn, error) {
	token := ""
	if sb.EnvdAccessToken != nil {
		token = *sb.EnvdAccessToken
	}
	return r.dial(c, sb.SandboxID, token, sb.Domain)
}

// lease is how long the service keeps the sandbox after a refresh.
func (c *conn) lease() time.Duration { return time.Duration(c.cfg.timeout) * time.Second }

// touch refreshes the lease when a third of it has passed, so a sandbox
// in use never expires under its work.
func (c *conn) touch(ctx context.Context) error {
	c.mu.Lock()
	due := c.r.o.Now().Sub(c.refreshed) >= c.lease()/3
	c.mu.Unlock()
	if !due {
		return nil
	}
	cl, err := c.r.control(c.cfg)
	if err != nil {
		return err
	}
	res, err := cl.PostSandboxesSandboxIDTimeoutWithResponse(ctx, c.id, api.SandboxTimeoutRequest{Timeout: c.cfg.timeout})
	if err != nil {
		return c.cfg.unreachable(err, "refreshing the lease of e2b sandbox %s", c.id)
	}
	if res.StatusCode() != http.StatusNoContent && res.StatusCode() != http.StatusOK {
		return c.cfg.answered(res.HTTPResponse, res.Body, "refreshing the lease of e2b sandbox %s", c.id)
	}
	c.mu.Lock()
	c.refreshed = c.r.o.Now()
	c.mu.Unlock()
	return nil
}

// keepAlive refreshes the lease while long work (a command, a terminal)
// runs; the returned func stops it.
func (c *conn) keepAlive(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	every := c.lease() / 3
	if every < time.Second {
		every = time.Second
	}
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := c.touch(ctx); err != nil && ctx.Err() == nil {
					c.r.o.Log.Warn("refreshing an e2b sandbox's lease failed", "sandbox", c.id, "err", err)
				}
			}
		}
	}()
	return cancel
}

func decodeJSON(b []byte, v any) error { return json.Unmarshal(b, v) }
