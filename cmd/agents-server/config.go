package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/agents-server/agents-server/workbench"
)

// config is everything a start needs; flags override their env equivalents.
type config struct {
	Addr          string
	DataDir       string
	DatabaseURL   string
	FailoverAfter time.Duration
	// MCPSessionIdle closes an /mcp session unused for this long.
	MCPSessionIdle time.Duration
	BaseURL        string
	SecretKeyFile  string
	SecretKey      string // AGENTS_SECRET_KEY (env only: a flag would show in ps)
	Token          string // AGENTS_TOKEN (env only, likewise)
	LogLevel       string
	LogFormat      string
	// Where a ChatGPT sign-in goes: OpenAI's auth server and the Codex
	// backend unless a flag points elsewhere (a proxy, a test double).
	ChatGPTAuthURL    string
	ChatGPTBackendURL string
	// MetricsAddr, when set, serves /metrics there without a token (for a
	// Prometheus on a private network); the API serves it to admins anyway.
	MetricsAddr string
	// OTLPEndpoint, when set, exports runs as OpenTelemetry traces to this
	// OTLP/HTTP traces URL.
	OTLPEndpoint string
	// SSO is single sign-on and whether passwords sign in.
	SSO ssoConfig

	// Not flags: tuned by tests.
	HTTP   workbench.HTTPConfig
	Hub    workbench.HubOptions
	Images workbench.ImageOptions // bounds on decoding uploads (zero: the defaults)
	Clock  workbench.Clock        // nil: the system clock
	// TriggerEvery is how often the scheduler looks for due cron ticks
	// (0: every second).
	TriggerEvery   time.Duration
	PasswordParams workbench.PasswordParams
	DrainTimeout   time.Duration
	// E2BHTTP makes the e2b backend's calls (nil: the default transport,
	// which honours HTTPS_PROXY and the system's roots).
	E2BHTTP *http.Client
	// ChatGPTHTTP makes the sign-in's and the Codex bridge's calls (nil:
	// the default transport).
	ChatGPTHTTP *http.Client
}

// envOr returns the environment variable's value, or def when unset.
func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

// parseConfig reads flags and environment. Returns an error for bad flags.
func parseConfig(args []string, stderr io.Writer) (config, error) {
	return parseConfigAs("agents-server", args, stderr, nil)
}

// parseConfigAs parses the server's flags for command name, with the
// command's own flags (own, nil for the server) beside them: a command on
// the store (backup, restore) finds it as the server does.
func parseConfigAs(name string, args []string, stderr io.Writer, own func(*flag.FlagSet)) (config, error) {
	cfg := config{
		DrainTimeout: 5 * time.Second,
		SecretKey:    os.Getenv("AGENTS_SECRET_KEY"),
		Token:        os.Getenv("AGENTS_TOKEN"),
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if own != nil {
		own(fs)
	}
	fs.StringVar(&cfg.Addr, "addr", envOr("AGENTS_ADDR", "127.0.0.1:9527"), "listen address (env AGENTS_ADDR)")
	fs.StringVar(&cfg.DataDir, "data-dir", envOr("AGENTS_DATA_DIR", defaultDataDir()), "where the database lives (env AGENTS_DATA_DIR)")
	fs.StringVar(&cfg.DatabaseURL, "database-url", envOr("AGENTS_DATABASE_URL", ""),
		"keep the store on Postgres, e.g. postgres://agents@db:5432/agents?sslmode=require, for several replicas sharing one database; without it, SQLite in --data-dir. Prefer the env AGENTS_DATABASE_URL or PGPASSWORD for a password: a flag shows in ps")
	failover, err := time.ParseDuration(envOr("AGENTS_FAILOVER_AFTER", workbench.DefaultFailoverAfter.String()))
	if err != nil {
		return config{}, fmt.Errorf("AGENTS_FAILOVER_AFTER: %v", err)
	}
	fs.DurationVar(&cfg.FailoverAfter, "failover-after", failover,
		"with --database-url: how long the runs of a replica that died stay running before another replica ends them as server_restarted and takes over its work (env AGENTS_FAILOVER_AFTER)")
	idle, err := time.ParseDuration(envOr("AGENTS_MCP_SESSION_IDLE", workbench.DefaultMCPSessionIdle.String()))
	if err != nil {
		return config{}, fmt.Errorf("AGENTS_MCP_SESSION_IDLE: %v", err)
	}
	fs.DurationVar(&cfg.MCPSessionIdle, "mcp-session-idle", idle,
		"close an /mcp session no request has reached for this long; its client starts a new one (env AGENTS_MCP_SESSION_IDLE)")
	fs.StringVar(&cfg.BaseURL, "base-url", envOr("AGENTS_BASE_URL", ""),
		"external origin people reach the server at, e.g. https://agents.example.com; the printed sign-in link uses it, and forwarding headers are never trusted (env AGENTS_BASE_URL)")
	fs.StringVar(&cfg.SecretKeyFile, "secret-key-file", envOr("AGENTS_SECRET_KEY_FILE", ""),
		"file holding the 32-byte key (base64 or hex) that seals credentials at rest; or set AGENTS_SECRET_KEY")
	fs.StringVar(&cfg.LogLevel, "log-level", envOr("AGENTS_LOG_LEVEL", "info"), "debug, info, warn or error (env AGENTS_LOG_LEVEL)")
	fs.StringVar(&cfg.LogFormat, "log-format", envOr("AGENTS_LOG_FORMAT", "text"), "text or json (env AGENTS_LOG_FORMAT)")
	fs.StringVar(&cfg.ChatGPTAuthURL, "chatgpt-auth-url", envOr("AGENTS_CHATGPT_AUTH_URL", workbench.DefaultChatGPTAuthURL),
		"the auth server ChatGPT sign-ins use (env AGENTS_CHATGPT_AUTH_URL)")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", envOr("AGENTS_METRICS_ADDR", ""),
		"also serve /metrics here, without a token, e.g. 127.0.0.1:9090 (env AGENTS_METRICS_ADDR; admins always reach /metrics on --addr)")
	fs.StringVar(&cfg.OTLPEndpoint, "otlp-endpoint", envOr("AGENTS_OTLP_ENDPOINT", ""),
		"export runs as OpenTelemetry traces to this OTLP/HTTP URL, e.g. http://127.0.0.1:4318/v1/traces (env AGENTS_OTLP_ENDPOINT; off when empty)")
	fs.StringVar(&cfg.ChatGPTBackendURL, "chatgpt-backend-url", envOr("AGENTS_CHATGPT_BACKEND_URL", workbench.DefaultChatGPTBackendURL),
		"the Codex backend chatgpt_login providers call (env AGENTS_CHATGPT_BACKEND_URL)")
	if err := ssoFlags(fs, &cfg.SSO); err != nil {
		return config{}, err
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s [flags]\n       agents-server version | openapi | scripted-model [--addr …] [--scripts file.json]\n"+
			"       agents-server backup --to FILE | restore --from FILE [--data-dir DIR] [--secret-key-file FILE]\n\nFlags:\n", name)
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nEnvironment: AGENTS_TOKEN fixes the bootstrap admin's API token; AGENTS_SECRET_KEY is the sealing key; AGENTS_OIDC_CLIENT_SECRET is the single sign-on client secret.\n")
	}
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.BaseURL != "" && !strings.HasPrefix(cfg.BaseURL, "http://") && !strings.HasPrefix(cfg.BaseURL, "https://") {
		return config{}, fmt.Errorf("--base-url must start with http:// or https://")
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if err := cfg.SSO.check(cfg.BaseURL); err != nil {
		return config{}, err
	}
	if cfg.FailoverAfter < time.Second {
		return config{}, fmt.Errorf("--failover-after must be at least 1s")
	}
	if cfg.MCPSessionIdle < time.Second {
		return config{}, fmt.Errorf("--mcp-session-idle must be at least 1s")
	}
	if cfg.DatabaseURL != "" && !strings.HasPrefix(cfg.DatabaseURL, "postgres://") && !strings.HasPrefix(cfg.DatabaseURL, "postgresql://") {
		return config{}, fmt.Errorf("--database-url must be a postgres:// URL (SQLite lives in --data-dir)")
	}
	for name, v := range map[string]string{"--chatgpt-auth-url": cfg.ChatGPTAuthURL, "--chatgpt-backend-url": cfg.ChatGPTBackendURL} {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return config{}, fmt.Errorf("%s must be an absolute http(s) URL", name)
		}
	}
	return cfg, nil
}

// defaultDataDir is the per-user data folder: $XDG_DATA_HOME or
// ~/.local/share on Unix, Application Support on macOS, LocalAppData on
// Windows.
func defaultDataDir() string {
	const name = "agents-server"
	if runtime.GOOS == "windows" {
		if d := os.Getenv("LocalAppData"); d != "" {
			return filepath.Join(d, name)
		}
	}
	home, err := os.UserHomeDir()
	if runtime.GOOS == "darwin" && err == nil {
		return filepath.Join(home, "Library", "Application Support", name)
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, name)
	}
	if err != nil {
		return filepath.Join(".", "data")
	}
	return filepath.Join(home, ".local", "share", name)
}

// newLogger builds the process logger on stderr.
func newLogger(level, format string, w io.Writer) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %q is not debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format: %q is not text or json", format)
}
