// Package e2bdouble is a local E2B-compatible service for tests, built on
// the server interfaces generated from the same specifications as the
// backend's clients: a control plane (create, connect, pause, kill, list,
// leases that expire into a pause or a kill) and, per sandbox, a daemon
// serving the Connect process and filesystem services and the file API
// with real local processes — each in a private mount namespace whose
// /workspace, /tmp and /root are the sandbox's own directories — and real
// PTYs, refusing any call without the sandbox's access token.
//
// It listens once, in plain HTTP, for the control plane and as an HTTP
// proxy (CONNECT), and once in TLS for the hosts a service would have:
// api.<domain> and <port>-<sandbox id>.<domain>, signed by its own
// authority. A client reaches sandboxes by proxying through it (Client,
// or HTTPS_PROXY and SSL_CERT_FILE for a whole process) — as real as name
// resolution allows on a machine without the service's DNS.
package e2bdouble

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/api"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/envd"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/filesystem/filesystemconnect"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/process/processconnect"
)

// DefaultDomain is the domain the double serves sandboxes under.
const DefaultDomain = "e2b.test"

// EnvdPort is the daemon's port in a sandbox host name.
const EnvdPort = 49983

// Options configure a Double.
type Options struct {
	// APIKey is the key the control plane requires ("" = any).
	APIKey string
	// Templates are the template ids it knows (none: any).
	Templates []string
	// Domain is the sandbox domain; "" = DefaultDomain.
	Domain string
	// Dir holds the sandboxes' files; "" = a new temporary directory,
	// removed by Close.
	Dir string
	// Now is the clock leases are measured by; nil: time.Now.
	Now func() time.Time
	// Log receives one line per control-plane call (nil: none).
	Log io.Writer
	// RequireHeaders are headers every call (control plane and daemon)
	// must carry, as some compatible services require their own.
	RequireHeaders map[string]string
	// DeadlineLead brings the daemon's end of a call that forwards a
	// timeout (Connect-Timeout-Ms) this much sooner than the caller's own
	// deadline, as a daemon whose timer started first would: the stream
	// then ends deadline_exceeded while the caller's context still runs.
	// 0: the timeout as forwarded.
	DeadlineLead time.Duration
	// DeadlineSendsEnd makes the killed process's end event win the race
	// with the stream's deadline, as it can on envd: the caller then
	// sees the command end (killed, not exited) and the stream close
	// cleanly, instead of deadline_exceeded.
	DeadlineSendsEnd bool
}

// Double is a running E2B-compatible service.
type Double struct {
	o       Options
	ca      *authority
	plain   net.Listener
	secure  net.Listener
	servers []*http.Server
	ownDir  bool
	stop    chan struct{}

	mu    sync.Mutex
	boxes map[string]*box
}

// New starts a double on loopback ports.
func New(o Options) (*Double, error) {
	if o.Domain == "" {
		o.Domain = DefaultDomain
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	d := &Double{o: o, boxes: map[string]*box{}, stop: make(chan struct{})}
	if o.Dir == "" {
		dir, err := os.MkdirTemp("", "e2b-double-")
		if err != nil {
			return nil, err
		}
		d.o.Dir, d.ownDir = dir, true
	}
	var err error
	if d.ca, err = newAuthority(o.Domain); err != nil {
		return nil, err
	}
	if d.plain, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		return nil, err
	}
	if d.secure, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		d.plain.Close()
		return nil, err
	}
	h := d.handler()
	plain := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodConnect {
			d.tunnel(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	secure := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{d.ca.cert}, NextProtos: []string{"h2", "http/1.1"}}}
	d.servers = []*http.Server{plain, secure}
	go func() { _ = plain.Serve(d.plain) }()
	go func() { _ = secure.ServeTLS(d.secure, "", "") }()
	go d.sweepLoop()
	return d, nil
}

// Close stops the double, killing every sandbox's processes.
func (d *Double) Close() error {
	close(d.stop)
	for _, s := range d.servers {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = s.Shutdown(ctx)
		cancel()
		_ = s.Close()
	}
	d.mu.Lock()
	for _, b := range d.boxes {
		b.killAll()
	}
	d.mu.Unlock()
	if d.ownDir {
		return os.RemoveAll(d.o.Dir)
	}
	return nil
}

// APIURL is the control plane's plain URL (a loopback address, reached
// without the proxy).
func (d *Double) APIURL() string { return "http://" + d.plain.Addr().String() }

// Domain is the sandbox domain.
func (d *Double) Domain() string { return d.o.Domain }

// ProxyURL is the proxy every host of the domain is reached through.
func (d *Double) ProxyURL() string { return "http://" + d.plain.Addr().String() }

// CACert is the PEM certificate of the authority that signed the
// double's hosts.
func (d *Double) CACert() []byte { return d.ca.caPEM }

// Client is an HTTP client that reaches the double's hosts: through its
// proxy, trusting its authority, with no overall timeout.
func (d *Double) Client() *http.Client {
	proxy, _ := url.Parse(d.ProxyURL())
	return &http.Client{Transport: &http.Transport{
		// Only the domain's hosts go through the proxy, as NO_PROXY
		// would have it: anything else is dialled directly.
		Proxy: func(r *http.Request) (*url.URL, error) {
			if h := r.URL.Hostname(); h == "api."+d.o.Domain || strings.HasSuffix(h, "."+d.o.Domain) {
				return proxy, nil
			}
			return nil, nil
		},
		TLSClientConfig:   &tls.Config{RootCAs: d.ca.pool},
		ForceAttemptHTTP2: true,
	}}
}

// tunnel serves CONNECT: every target is the double's TLS listener, which
// routes by the host the client asked for.
func (d *Double) tunnel(w http.ResponseWriter, r *http.Request) {
	host, _, _ := net.SplitHostPort(r.Host)
	if host != "api."+d.o.Domain && !strings.HasSuffix(host, "."+d.o.Domain) {
		http.Error(w, "this proxy reaches only *."+d.o.Domain, http.StatusForbidden)
		return
	}
	upstream, err := net.Dial("tcp", d.secure.Addr().String())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		http.Error(w, "cannot tunnel", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
	client, buf, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	if n := buf.Reader.Buffered(); n > 0 {
		b, _ := buf.Reader.Peek(n)
		_, _ = upstream.Write(b)
	}
	go func() {
		_, _ = io.Copy(upstream, client)
		upstream.Close()
	}()
	_, _ = io.Copy(client, upstream)
	client.Close()
}

// handler routes a request: <port>-<id>.<domain> (or the E2b-Sandbox-Id
// header) to that sandbox's daemon, anything else to the control plane.
func (d *Double) handler() http.Handler {
	control := api.Handler(&controlPlane{d: d})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for name, v := range d.o.RequireHeaders {
			if r.Header.Get(name) != v {
				writeError(w, http.StatusForbidden, "the "+name+" header is missing or wrong")
				return
			}
		}
		id, port := d.sandboxOf(r)
		if id == "" {
			if d.o.APIKey != "" && r.Header.Get("X-API-Key") != d.o.APIKey {
				writeError(w, http.StatusUnauthorized, "Invalid API key")
				return
			}
			if d.o.Log != nil {
				fmt.Fprintf(d.o.Log, "e2b-double: %s %s\n", r.Method, r.URL.Path)
			}
			control.ServeHTTP(w, r)
			return
		}
		if port != EnvdPort {
			writeError(w, http.StatusBadGateway, fmt.Sprintf("nothing listens on port %d of sandbox %s", port, id))
			return
		}
		d.mu.Lock()
		b := d.boxes[id]
		d.mu.Unlock()
		switch {
		case b == nil:
			writeError(w, http.StatusBadGateway, "sandbox "+id+" not found")
		case b.state() != api.Running:
			writeError(w, http.StatusBadGateway, "sandbox "+id+" is paused")
		default:
			b.daemon.ServeHTTP(w, r)
		}
	})
}

// sandboxOf reads the sandbox a request is for from its host, else from
// the headers services that route by header use.
func (d *Double) sandboxOf(r *http.Request) (string, int) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if sub, ok := strings.CutSuffix(host, "."+d.o.Domain); ok && sub != "api" {
		if p, id, ok := strings.Cut(sub, "-"); ok {
			var port int
			if _, err := fmt.Sscanf(p, "%d", &port); err == nil {
				return id, port
			}
		}
	}
	if id := r.Header.Get("E2b-Sandbox-Id"); id != "" {
		var port int
		_, _ = fmt.Sscanf(r.Header.Get("E2b-Sandbox-Port"), "%d", &port)
		return id, port
	}
	return "", 0
}

// newBox makes a sandbox's directories and daemon.
func (d *Double) newBox(template string, secure bool, autoPause bool, meta map[string]string, timeout time.Duration) (*box, error) {
	id := "i" + randomHex(10)
	dir := filepath.Join(d.o.Dir, id)
	for _, sub := range []string{"fs/workspace", "fs/tmp", "fs/root", "fs/home/user", "root"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, err
		}
	}
	_ = os.Chmod(filepath.Join(dir, "fs/tmp"), 0o1777)
	b := &box{id: id, template: template, dir: dir, autoPause: autoPause, meta: meta,
		started: d.o.Now(), endAt: d.o.Now().Add(timeout), st: api.Running, procs: map[uint32]*proc{},
		deadlineLead: d.o.DeadlineLead, deadlineSendsEnd: d.o.DeadlineSendsEnd}
	if secure {
		b.token = randomHex(16)
	}
	mux := http.NewServeMux()
	path, h := processconnect.NewProcessHandler(&processService{b: b})
	mux.Handle(path, h)
	path, h = filesystemconnect.NewFilesystemHandler(&filesystemService{b: b})
	mux.Handle(path, h)
	files := envd.HandlerWithOptions(&fileAPI{b: b}, envd.StdHTTPServerOptions{BaseRouter: http.NewServeMux()})
	mux.Handle("/files", files)
	mux.Handle("/health", files)
	b.daemon = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" && b.token != "" && r.Header.Get("X-Access-Token") != b.token {
			writeError(w, http.StatusUnauthorized, "invalid access token")
			return
		}
		mux.ServeHTTP(w, r)
	})
	d.mu.Lock()
	d.boxes[id] = b
	d.mu.Unlock()
	return b, nil
}

// Sweep applies the leases that ran out: a sandbox created with auto-pause
// is paused (its files kept), any other killed.
func (d *Double) Sweep() {
	now := d.o.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	for id, b := range d.boxes {
		if b.state() != api.Running || now.Before(b.leaseEnd()) {
			continue
		}
		if b.autoPause {
			b.pause()
			continue
		}
		b.killAll()
		_ = os.RemoveAll(b.dir)
		delete(d.boxes, id)
	}
}

func (d *Double) sweepLoop() {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			d.Sweep()
		}
	}
}

// Info is one sandbox as a test sees it.
type Info struct {
	ID       string
	Template string
	State    string // running or paused
	Metadata map[string]string
	Token    string
	EndAt    time.Time
	// Processes counts the processes it runs now.
	Processes int
}

// Sandboxes lists the double's sandboxes.
func (d *Double) Sandboxes() []Info {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Info
	for _, b := range d.boxes {
		b.mu.Lock()
		out = append(out, Info{ID: b.id, Template: b.template, State: string(b.st), Metadata: b.meta, Token: b.token,
			EndAt: b.endAt, Processes: len(b.procs)})
		b.mu.Unlock()
	}
	return out
}

// Sandbox is one sandbox by id.
func (d *Double) Sandbox(id string) (Info, bool) {
	for _, s := range d.Sandboxes() {
		if s.ID == id {
			return s, true
		}
	}
	return Info{}, false
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// errNotRunning is a process call on a sandbox that is not running.
var errNotRunning = errors.New("the sandbox is not running")
