// When the MCP server list is polled: while a connection is under way, and
// for a grace period after a write (whose reconnect may not have begun).
import { QueryClient } from '@tanstack/react-query'
import { describe, expect, it } from 'vitest'
import { mcpServer } from '../test/mcp'
import { followMCPServers, GRACE_MS, mcpPollInterval, POLL_MS, splitToolName } from './mcpServers'

describe('polling the MCP servers', () => {
  const t0 = 1_000_000_000_000

  it('polls while a row connects or waits for a sign-in, and stops once every row settled', () => {
    expect(mcpPollInterval([mcpServer(), mcpServer({ status: 'connecting' })], t0)).toBe(POLL_MS)
    expect(mcpPollInterval([mcpServer({ status: 'authorizing' })], t0)).toBe(POLL_MS)
    for (const status of ['connected', 'disconnected', 'needs_auth', 'disabled'] as const) {
      expect(mcpPollInterval([mcpServer({ status })], t0)).toBe(false)
    }
    expect(mcpPollInterval(undefined, t0)).toBe(false)
  })

  it('after a write it polls through the grace even when the list looks settled', async () => {
    await followMCPServers(new QueryClient(), t0)
    expect(mcpPollInterval([mcpServer({ status: 'disconnected' })], t0 + 1)).toBe(POLL_MS)
    expect(mcpPollInterval([mcpServer({ status: 'disconnected' })], t0 + GRACE_MS - 1)).toBe(POLL_MS)
    expect(mcpPollInterval([mcpServer({ status: 'disconnected' })], t0 + GRACE_MS)).toBe(false)
    expect(mcpPollInterval([mcpServer({ status: 'connecting' })], t0 + GRACE_MS)).toBe(POLL_MS)
  })
})

describe('MCP tool names', () => {
  it('split at the first "__": the server, then the tool', () => {
    expect(splitToolName('everything__echo')).toEqual({ server: 'everything', tool: 'echo' })
    expect(splitToolName('my_srv__get__it')).toEqual({ server: 'my_srv', tool: 'get__it' })
    for (const builtin of ['exec_command', 'todo_write', '__x', 'x__']) expect(splitToolName(builtin)).toBeNull()
  })
})
