package workbench

import (
	"database/sql"
	"log/slog"
	"net/http"
	"time"

	"github.com/agents-server/agents-server/adapters/chatgpt"
	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/openai"
	"github.com/agents-server/agents-server/core/attachments"
	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/ports"
)

// Options is everything Open needs. Only a place for the data is required:
// DataDir, DB, or DatabaseURL.
type Options struct {
	// DataDir holds the SQLite database (agents.db); it is created when
	// absent.
	DataDir string
	// DB, when set, is the SQLite database to use instead of one in
	// DataDir: a file database opened with the modernc.org/sqlite driver
	// (sql.Open("sqlite", "file:/path/app.db"); importing this package
	// registers it). The workbench migrates it, writes through it on one
	// connection (it sets the pool's limits) and reads the same file
	// through a pool of its own; the caller closes DB after Close.
	DB *sql.DB
	// DatabaseURL, when set, keeps the store on a Postgres server
	// (postgres://user@host:port/db?sslmode=…; a password may come from
	// PGPASSWORD or ~/.pgpass instead of the URL) rather than in SQLite:
	// what several replicas serving one team share. The database must
	// exist; the workbench migrates it. DataDir and DB are then unused.
	DatabaseURL string
	// SecretKey is the 32-byte key that seals credentials at rest (see
	// ParseKey); nil stores them in plaintext, with a warning in the log.
	// Once set for a database, the same key must be given every time.
	SecretKey []byte
	// Logger receives the workbench's logs (nil: discarded).
	Logger *slog.Logger
	// Clock tells the time (nil: the system clock, UTC, milliseconds).
	Clock ports.Clock
	// IDs mints row ids (nil: UUIDv7, as the wire contract pages on them).
	IDs ports.IDs
	// AdminToken fixes the bootstrap admin's API token; "" keeps the stored
	// one, or mints one on first start (see Workbench.AdminToken).
	AdminToken string
	// BaseURL is the origin people reach the server at (scheme and host,
	// e.g. https://example.com; a mount's prefix is added to it), for links
	// handed out: OAuth redirects, webhook URLs. "" uses each request's own
	// address.
	BaseURL string
	// OIDC turns on single sign-on with an OpenID Provider (nil: off). It
	// needs BaseURL.
	OIDC *OIDCOptions
	// PasswordLoginOff refuses sign-ins with a password; the bootstrap
	// admin's token and personal access tokens still work (recovery,
	// scripts).
	PasswordLoginOff bool
	// Version names the build in /api/v1/server and the logs ("dev" when
	// empty).
	Version string

	// Tools are the program's Go tools (see NewTool); an agent is given one
	// by naming it in its tools list.
	Tools []Tool
	// Models are provider types whose model calls the program answers (see
	// Model).
	Models []Model

	// HTTP tunes the API's platform rules: body limits, rate budgets (zero
	// fields take httpapi.DefaultConfig()'s).
	HTTP httpapi.Config
	// Hub tunes the live event streams (zero: the defaults).
	Hub hub.Options
	// Images bounds the decoding of uploaded images that are scaled down:
	// how many at once, the memory one may take, how long an upload waits
	// (zero fields: the attachments package's defaults).
	Images attachments.Options
	// PasswordParams is the password hashing cost (zero: the default).
	PasswordParams auth.PasswordParams
	// DrainTimeout bounds Close's wait for live runs and requests (0: 5 s).
	DrainTimeout time.Duration
	// FailoverAfter bounds how long the runs of a replica that died stay
	// "running" on a shared database (Postgres) before another replica
	// ends them as server_restarted, pays the wake-ups they owed and takes
	// over its once-only work (0: DefaultFailoverAfter). Unused on SQLite:
	// one process, whose restart ends them at once.
	FailoverAfter time.Duration
	// ReplicaID names this workbench on the replica roll, the same across
	// its restarts, so a restart ends what its previous life left running
	// at once ("": the id kept in DataDir's replica-id file, made on first
	// start and locked while open; a new one each start without a
	// DataDir).
	ReplicaID string
	// TriggerEvery is how often the scheduler looks for due cron ticks (0:
	// every second).
	TriggerEvery time.Duration
	// MCPSessionIdle closes an /mcp session no request has reached for
	// this long, so abandoned sessions stop holding memory (0:
	// DefaultMCPSessionIdle).
	MCPSessionIdle time.Duration

	// ChatGPTAuthURL and ChatGPTBackendURL are where a ChatGPT sign-in and
	// its model calls go ("": OpenAI's); ChatGPTHTTP makes those calls
	// (nil: the default transport).
	ChatGPTAuthURL    string
	ChatGPTBackendURL string
	ChatGPTHTTP       *http.Client
	// E2BHTTP makes the e2b sandbox backend's calls (nil: the default
	// transport, which honours HTTPS_PROXY).
	E2BHTTP *http.Client

	// MetricsAddr, when set, serves /metrics there without a token (for a
	// Prometheus on a private network); admins reach it through the API
	// anyway.
	MetricsAddr string
	// OTLPEndpoint, when set, exports every run as an OpenTelemetry trace
	// to this OTLP/HTTP traces URL.
	OTLPEndpoint string
}

// withDefaults fills what the caller left zero.
func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	def := httpapi.DefaultConfig()
	if o.HTTP.BodyLimit == 0 {
		o.HTTP.BodyLimit = def.BodyLimit
	}
	if o.HTTP.RateLimits == (httpapi.RateLimits{}) {
		o.HTTP.RateLimits = def.RateLimits
	}
	if o.PasswordParams == (auth.PasswordParams{}) {
		o.PasswordParams = auth.DefaultPasswordParams
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = 5 * time.Second
	}
	if o.TriggerEvery <= 0 {
		o.TriggerEvery = time.Second
	}
	if o.FailoverAfter <= 0 {
		o.FailoverAfter = DefaultFailoverAfter
	}
	if o.ChatGPTAuthURL == "" {
		o.ChatGPTAuthURL = chatgpt.DefaultIssuer
	}
	if o.ChatGPTBackendURL == "" {
		o.ChatGPTBackendURL = openai.DefaultCodexURL
	}
	return o
}
