// MCP servers as the panel and the agent form read them. A server connects
// in the background after every write, so the list is polled while a
// connection is under way, and for a grace period after a write or a
// connect (the reconnect may not have begun when the write answered).
import { useQuery, type QueryClient } from '@tanstack/react-query'
import { api, ok, type MCPServer } from './api'
import { keys, refresh } from './queries'

export type MCPStatus = MCPServer['status']

/** How often the list is asked while something is settling. */
export const POLL_MS = 1000
/** How long after a write or a connect the list is polled, settled or not. */
export const GRACE_MS = 8000

/** Statuses that change by themselves: a handshake, or a sign-in in the popup. */
export const isSettling = (s: MCPStatus) => s === 'connecting' || s === 'authorizing'

let graceUntil = 0

/** The list's refetch interval: POLL_MS while a row is settling or within the grace, else none. */
export function mcpPollInterval(rows: MCPServer[] | undefined, now = Date.now()): number | false {
  if (now < graceUntil) return POLL_MS
  return rows?.some((r) => isSettling(r.status)) ? POLL_MS : false
}

export const useMCPServers = () =>
  useQuery({
    queryKey: keys.mcpServers,
    queryFn: () => ok(api.GET('/api/v1/mcp-servers')),
    refetchInterval: (q) => mcpPollInterval(q.state.data),
  })

/** After a write or a connect: ask for the list now and keep asking through the grace. */
export function followMCPServers(qc: QueryClient, now = Date.now()) {
  graceUntil = now + GRACE_MS
  return refresh(qc, keys.mcpServers)
}

/** An MCP tool's name as agents select it (server__tool), split; null for a built-in name. */
export function splitToolName(name: string): { server: string; tool: string } | null {
  const i = name.indexOf('__')
  if (i <= 0 || i + 2 >= name.length) return null
  return { server: name.slice(0, i), tool: name.slice(i + 2) }
}

/** How a status reads in a pill, and its tone. */
export function statusPill(s: MCPStatus): { label: string; tone: 'ok' | 'run' | 'warn' | 'error' | 'muted' } {
  switch (s) {
    case 'connected':
      return { label: 'connected', tone: 'ok' }
    case 'connecting':
      return { label: 'connecting', tone: 'run' }
    case 'authorizing':
      return { label: 'signing in', tone: 'run' }
    case 'needs_auth':
      return { label: 'needs sign-in', tone: 'warn' }
    case 'disconnected':
      return { label: 'disconnected', tone: 'error' }
    default:
      return { label: 'disabled', tone: 'muted' }
  }
}

/** Longer arguments (a path into node_modules) show their tail; the whole line stays in `full`. */
const ARG_MAX = 48
const LINE_MAX = 120

/**
 * A stdio server's command line as the list shows it: each argument as one
 * word (quoted when it holds spaces or is empty), a long one cut to its
 * tail — the file name is what tells servers apart — and the line cut at
 * LINE_MAX; `full` is the whole line (its title).
 */
export function commandLine(command: string, args: string[]): { short: string; full: string } {
  const word = (a: string) => (a === '' || /[\s"'\\]/.test(a) ? JSON.stringify(a) : a)
  const full = [command, ...args].map(word).join(' ')
  const cut = (a: string) => (a.length > ARG_MAX ? `…${a.slice(a.length - ARG_MAX + 1)}` : a)
  const line = [command, ...args.map((a) => cut(word(a)))].join(' ')
  return { short: line.length > LINE_MAX ? `${line.slice(0, LINE_MAX - 1)}…` : line, full }
}
