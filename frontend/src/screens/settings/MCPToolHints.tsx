import type { MCPHints } from '../../lib/api'

/**
 * What a server may say about a tool, in words, for each value it may
 * state. Whether a tool destroys or repeats safely is meaningful only for
 * one that writes (the MCP spec), so a read-only tool's are not repeated.
 */
const WORDS: { key: keyof MCPHints; yes: string; no: string; writesOnly?: boolean }[] = [
  { key: 'readOnlyHint', yes: 'read-only', no: 'writes' },
  { key: 'destructiveHint', yes: 'destructive', no: 'non-destructive', writesOnly: true },
  { key: 'idempotentHint', yes: 'idempotent', no: 'not idempotent', writesOnly: true },
  { key: 'openWorldHint', yes: 'open world', no: 'closed world' },
]

export const HINTS_DISCLAIMER = 'Hints are what the MCP server says about its own tools: shown, never verified — they do not make a tool safe, and they never skip an approval.'

/** The hints an MCP server states for a tool, as small badges; nothing when it states none. */
export function MCPToolHints({ hints }: { hints: MCPHints | null | undefined }) {
  const stated = WORDS.flatMap(({ key, yes, no, writesOnly }) => {
    const v = writesOnly && hints?.readOnlyHint === true ? undefined : hints?.[key]
    return v === true ? [yes] : v === false ? [no] : []
  })
  if (!stated.length) return null
  return (
    <span className="hint-badges" role="group" aria-label="Hints the server claims (not verified)" title={HINTS_DISCLAIMER}>
      {stated.map((w) => <span key={w} className="pill pill-hint">claims {w}</span>)}
    </span>
  )
}
