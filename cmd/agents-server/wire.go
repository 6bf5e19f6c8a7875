package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/agents-server/agents-server/workbench"
)

// app is the served process: the workbench, mounted at the root of one
// listener. The command is the workbench package's first embedder.
type app struct {
	cfg  config
	log  *slog.Logger
	wb   *workbench.Workbench
	http *http.Server
	ln   net.Listener
}

// newApp opens the workbench and binds the listener. Nothing is served
// until serve.
func newApp(ctx context.Context, cfg config, log *slog.Logger) (_ *app, err error) {
	key, err := loadSecretKey(cfg)
	if err != nil {
		return nil, err
	}
	wb, err := workbench.Open(ctx, workbench.Options{
		DataDir: cfg.DataDir, DatabaseURL: cfg.DatabaseURL, SecretKey: key, Logger: log, Clock: cfg.Clock, AdminToken: cfg.Token,
		BaseURL: cfg.BaseURL, Version: version(),
		HTTP: cfg.HTTP, Hub: cfg.Hub, Images: cfg.Images, PasswordParams: cfg.PasswordParams, DrainTimeout: cfg.DrainTimeout, TriggerEvery: cfg.TriggerEvery, FailoverAfter: cfg.FailoverAfter,
		MCPSessionIdle: cfg.MCPSessionIdle,
		ChatGPTAuthURL: cfg.ChatGPTAuthURL, ChatGPTBackendURL: cfg.ChatGPTBackendURL, ChatGPTHTTP: cfg.ChatGPTHTTP, E2BHTTP: cfg.E2BHTTP,
		MetricsAddr: cfg.MetricsAddr, OTLPEndpoint: cfg.OTLPEndpoint,
		OIDC: cfg.SSO.options(), PasswordLoginOff: cfg.SSO.PasswordLoginOff,
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			wb.Close()
		}
	}()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w", cfg.Addr, err)
	}
	return &app{
		cfg: cfg, log: log, wb: wb, ln: ln,
		http: &http.Server{
			Handler:           wb.Handler(workbench.MountOptions{}),
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		},
	}, nil
}

// loadSecretKey reads the sealing key from --secret-key-file or
// AGENTS_SECRET_KEY; neither means plaintext mode (nil).
func loadSecretKey(cfg config) ([]byte, error) {
	text := cfg.SecretKey
	if cfg.SecretKeyFile != "" {
		b, err := os.ReadFile(cfg.SecretKeyFile)
		if err != nil {
			return nil, fmt.Errorf("read --secret-key-file %s: %w", cfg.SecretKeyFile, err)
		}
		text = string(b)
	}
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	return workbench.ParseKey(text)
}

// URL is the address the server answers on.
func (a *app) URL() string {
	addr := a.ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(addr.Port))
}

// ReadyLine is the one line a person clicks to sign in: on --base-url
// when set (the origin people reach the server at, behind a proxy), else
// on the listening address.
func (a *app) ReadyLine() string {
	origin := a.URL()
	if a.cfg.BaseURL != "" {
		origin = a.cfg.BaseURL
	}
	return fmt.Sprintf("agents-server ready: %s/#token=%s", origin, a.wb.AdminToken())
}

// serve answers requests until shutdown; it returns nil after a shutdown.
func (a *app) serve() error {
	if err := a.http.Serve(a.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// shutdown drains: new work is refused with 503 while live runs and
// requests in flight finish (bounded by DrainTimeout; runs still going
// then are cancelled), every stream and socket is closed, then the
// listener, and last the workbench (its upkeep and its store).
func (a *app) shutdown() error {
	a.wb.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := a.http.Shutdown(ctx); err != nil {
		a.http.Close()
	}
	return a.wb.Close()
}
