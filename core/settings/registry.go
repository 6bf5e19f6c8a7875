// Package settings serves the global settings: one registry table that the
// backend reads defaults and types from, the API validates writes against,
// and the settings panel renders.
package settings

import "github.com/agents-server/agents-server/core/domain"

// The keys the backend reads. Adding a setting is one Registry row.
const (
	KeyProxyURL                  = "proxy_url"
	KeySystemPrompt              = "system_prompt"
	KeyTraceRetentionDays        = "trace_retention_days"
	KeyTraceIncludeSensitiveData = "trace_include_sensitive_data"
	KeyTraceSpanDataKB           = "trace_span_data_kb"
	KeyLogSensitiveData          = "log_sensitive_data"
	KeyApprovalTTLMinutes        = "approval_ttl_minutes"
	KeyMaxTerminalsPerSandbox    = "max_terminals_per_sandbox"
	KeySandboxIdleMinutes        = "sandbox_idle_minutes"
	KeyMaxTasksPerSession        = "max_tasks_per_session"
	KeyMaxStreamsPerUser         = "max_streams_per_user"
	KeyMCPServerEnabled          = "mcp_server_enabled"
	KeyTitleModel                = "title_model"
	KeySkillsGitHubAPI           = "skills_github_api_url"
	KeyMCPResultMaxKB            = "mcp_result_max_kb"
	KeyMCPStdioMembersOnHost     = "mcp_stdio_members_on_host"
	KeyOutboundAllowPrivate      = domain.OutboundAllowPrivateSetting
	KeyOutboundAllowedHosts      = domain.OutboundAllowedHostsSetting
	KeyMaxQueuedTasksPerSession  = "max_queued_tasks_per_session"
	KeyMaxMCPServersPerUser      = "max_mcp_servers_per_user"
	KeyMaxRunsPerUser            = "max_runs_per_user"
	KeyMaxMCPSessionsPerUser     = "max_mcp_sessions_per_user"
	KeyAuditRetentionDays        = "audit_retention_days"
	KeyOIDCLinkVerifiedEmail     = domain.OIDCLinkVerifiedEmailSetting
	KeyBudgetsApplyToAdmins      = "budgets_apply_to_admins"
)

// Registry is every global setting, in the order the panel shows them.
var Registry = []domain.SettingDef{
	{
		Key: KeyProxyURL, Kind: domain.SettingURL, Schemes: []string{"http", "https", "socks5"},
		Group: "network", Label: "Outbound proxy",
		Description: "Proxy for calls to model providers and other upstreams (http, https or socks5). " +
			"Secret because a proxy URL often carries user:password.",
		Secret: true,
	},
	{
		Key: KeySystemPrompt, Kind: domain.SettingText, Group: "prompt", Label: "Global system prompt",
		Description: "Text placed before every agent's own instructions.",
	},
	{
		Key: KeyTitleModel, Kind: domain.SettingString, Group: "prompt", Label: "Title model",
		Description: "The model that names new conversations, on the agent's own provider (a small, fast one is best); " +
			"empty uses the agent's own model.",
	},
	{
		Key: KeyTraceRetentionDays, Kind: domain.SettingInt, Default: "30", Min: 0, Max: 3650,
		Group: "tracing", Label: "Trace retention (days)",
		Description: "Trace rows older than this are pruned; 0 keeps them for ever.",
	},
	{
		Key: KeyTraceIncludeSensitiveData, Kind: domain.SettingBool, Default: "true",
		Group: "tracing", Label: "Include conversation content in traces",
		Description: "When off, traces keep timings and structure but no prompts, outputs or tool arguments.",
	},
	{
		Key: KeyTraceSpanDataKB, Kind: domain.SettingInt, Default: "1024", Min: 1, Max: 65536,
		Group: "tracing", Label: "Span payload cap (KB)",
		Description: "A span payload past this size is replaced by a truncation marker; it is a disk budget.",
	},
	{
		Key: KeyLogSensitiveData, Kind: domain.SettingBool, Default: "false",
		Group: "logging", Label: "Log conversation content",
		Description: "When on, the server log may include prompts and model output. Credentials are never logged.",
	},
	{
		Key: KeyAuditRetentionDays, Kind: domain.SettingInt, Default: "365", Min: 0, Max: 36500,
		Group: "logging", Label: "Audit log retention (days)",
		Description: "Audit records (who changed what, sign-ins, refused webhooks) older than this are pruned; 0 keeps them for ever.",
	},
	{
		Key: KeyApprovalTTLMinutes, Kind: domain.SettingInt, Default: "1440", Min: 0, Max: 525600,
		Group: "limits", Label: "Approval expiry (minutes)",
		Description: "An unanswered tool approval expires after this long; 0 never expires.",
	},
	{
		Key: KeyMaxTerminalsPerSandbox, Kind: domain.SettingInt, Default: "4", Min: 1, Max: 32,
		Group: "limits", Label: "Terminals per sandbox",
		Description: "How many web terminals may be open on one sandbox at once.",
	},
	{
		Key: KeySandboxIdleMinutes, Kind: domain.SettingInt, Default: "30", Min: 0, Max: 10080,
		Group: "limits", Label: "Sandbox idle stop (minutes)",
		Description: "A project container nobody uses is stopped (not removed) after this long; 0 never stops it.",
	},
	{
		Key: KeyMaxTasksPerSession, Kind: domain.SettingInt, Default: "6", Min: 1, Max: 100,
		Group: "limits", Label: "Background tasks per session",
		Description: "Live background tasks one conversation may hold; further spawns and retries wait.",
	},
	{
		Key: KeyMaxStreamsPerUser, Kind: domain.SettingInt, Default: "100", Min: 1, Max: 10000,
		Group: "limits", Label: "Open streams per user",
		Description: "How many run event streams (SSE) and WebSockets (/ws and /ws/terminal together) one account may hold open at once; " +
			"past it a new one is refused as rate_limited until one closes.",
	},
	{
		Key: KeyMCPServerEnabled, Kind: domain.SettingBool, Default: "true",
		Group: "mcp", Label: "Serve the workbench over MCP (/mcp)",
		Description: "When on, MCP clients (Claude Desktop, Cursor, another workbench) reach /mcp with a bearer token: " +
			"each agent the caller can see is an ask_<agent> tool, with list_sessions and read_session. Approvals still gate in the workbench.",
	},
	{
		Key: KeyMCPResultMaxKB, Kind: domain.SettingInt, Default: "1024", Min: 64, Max: 8192,
		Group: "mcp", Label: "MCP result kept (KB)",
		Description: "What one MCP tool result keeps on its card in the conversation, text, images and structured content together; " +
			"past it the rest is dropped and the card says so (the model reads at most 64 KB of a result anyway). " +
			"An answer larger than 16 MB is not read at all.",
	},
	{
		Key: KeyMCPStdioMembersOnHost, Kind: domain.SettingBool, Default: "false",
		Group: "mcp", Label: "Members may run MCP servers as programs on this host",
		Description: "A stdio MCP server is a program the workbench starts. Admins may run one on the server's own host; " +
			"members may only when this is on, and otherwise run theirs inside one of their projects' sandboxes. " +
			"Turning it off stops members' host programs at their next start.",
	},
	{
		Key: KeyMaxRunsPerUser, Kind: domain.SettingInt, Default: "10", Min: 1, Max: 1000,
		Group: "limits", Label: "Live runs per user",
		Description: "How many runs one account may have going at once, counted across its conversations, background tasks, " +
			"workflow steps, triggers and /mcp; a run paused for an approval does not count until its last call is decided. " +
			"Past it a new run (or the decision that would resume a paused one) is refused as rate_limited until one ends.",
	},
	{
		Key: KeyMaxMCPSessionsPerUser, Kind: domain.SettingInt, Default: "20", Min: 1, Max: 1000,
		Group: "mcp", Label: "MCP sessions per user",
		Description: "How many /mcp sessions one account may hold open at once; past it a new session is refused as " +
			"rate_limited until one is closed or expires idle.",
	},
	{
		Key: KeySkillsGitHubAPI, Kind: domain.SettingURL, Schemes: []string{"http", "https"}, Default: "https://api.github.com",
		Group: "skills", Label: "GitHub API for skill imports",
		Description: "Where a github.com repository URL is walked (anonymously) on a skill import: point it at a GitHub " +
			"Enterprise server's API (https://ghe.example.com/api/v3) to import from there.",
	},
	{
		Key: KeyOutboundAllowPrivate, Kind: domain.SettingBool, Default: "false",
		Group: "network", Label: "Members' configurations may reach private addresses",
		Description: "When off, what a member configures — an MCP server and its OAuth sign-in, a provider's base URL, a skill import — " +
			"may not reach loopback, private, link-local, carrier-grade NAT, unique-local or cloud metadata addresses (checked on " +
			"the address dialed, after DNS and on every redirect), so a member cannot make the server read its own network. " +
			"What an admin configures is never restricted. Turn on only where every member may reach that network.",
	},
	{
		Key: KeyOutboundAllowedHosts, Kind: domain.SettingText, Group: "network", Label: "Private hosts members may reach",
		Description: "Hosts and networks members' configurations may reach although they are private: IP addresses, CIDR networks, " +
			"host names or *.domain, separated by commas or new lines (e.g. 10.1.2.0/24, ollama.lan).",
		Parse: func(v string) (string, error) {
			canon, _, _, err := domain.ParseOutboundAllowlist(v)
			return canon, err
		},
	},
	{
		Key: KeyMaxQueuedTasksPerSession, Kind: domain.SettingInt, Default: "20", Min: 0, Max: 1000,
		Group: "limits", Label: "Queued background tasks per session",
		Description: "Background tasks one conversation may hold waiting behind its live-task cap (max_tasks_per_session); " +
			"past it a spawn is refused as conflict (a model is told why in the tool's output). 0: nothing waits, a spawn at the live cap is refused.",
	},
	{
		Key: KeyMaxMCPServersPerUser, Kind: domain.SettingInt, Default: "20", Min: 1, Max: 10000,
		Group: "limits", Label: "MCP servers per user",
		Description: "MCP servers one account may own, private and global together; past it adding one is refused as conflict. " +
			"Admins count too (they can raise this).",
	},
	{
		Key: KeyOIDCLinkVerifiedEmail, Kind: domain.SettingBool, Default: "false",
		Group: "sign-in", Label: "Single sign-on joins accounts by verified email",
		Description: "When on, a person's first single sign-on joins the existing local account whose username is their email, " +
			"if the identity provider marks that email verified. When off, a first sign-on always makes a new account. " +
			"Turn on only if the provider is trusted to verify emails: whoever it vouches for gets that account.",
	},
	{
		Key: KeyBudgetsApplyToAdmins, Kind: domain.SettingBool, Default: "false",
		Group: "limits", Label: "Budgets apply to admins",
		Description: "When on, an admin's model calls count against budgets and are refused at a limit like a member's. " +
			"When off, admins' calls are recorded and counted toward agent and provider budgets' totals but never refused.",
	},
}
