import { errorText } from '../../lib/api'
import { useAgentTools } from '../../lib/queries'

/** The origins a person reads a tool list by, in the order shown: what comes with every agent first. */
const ORIGINS: [string, string][] = [
  ['checklist', 'With every agent'], ['builtin', 'With every agent'], ['plan', 'In plan mode'], ['tasks', 'Background tasks'],
  ['workflows', 'Workflow authoring'], ['skills', 'Skills'], ['native', 'Program tools'], ['mcp', 'MCP'], ['handoff', 'Hand-offs'],
]
const groupOf = (origin: string) => ORIGINS.find(([o]) => o === origin)?.[1] ?? origin

/** A tool's description as a line: its first sentence. */
const firstSentence = (d = '') => (/^.*?[.!?](\s|$)/s.exec(d.trim())?.[0] ?? d).trim()

/**
 * What an agent gets, read-only: every tool by where it comes from, with
 * what it does — the ones that come with every agent (the checklist, the
 * task verbs) as much as those chosen above and below. A new agent's list
 * is shown once it is saved. (A project's sandbox tools join a run on a
 * project.)
 */
export function EffectiveTools({ agentId, error }: { agentId?: string; error?: string }) {
  const list = useAgentTools(agentId)
  const groups = new Map<string, { name: string; description: string }[]>()
  for (const t of list.data ?? []) {
    const g = groupOf(t.origin)
    groups.set(g, [...(groups.get(g) ?? []), { name: t.name, description: t.description }])
  }
  return (
    <section className="effective-tools" aria-label="What the agent gets">
      <h4 className="ctx-h">What the agent gets</h4>
      {error && <p className="error-text">{error}</p>}
      {!agentId ? (
        <p className="muted small">Every agent has the checklist (todo_write) and the background task verbs; once saved, its whole tool list shows here.</p>
      ) : list.isLoading ? (
        <p className="muted small">Loading its tools…</p>
      ) : list.isError ? (
        <p className="error-text small">{errorText(list.error)}</p>
      ) : (
        <dl className="tool-origins">
          {[...groups].map(([group, tools]) => (
            <div key={group}>
              <dt>{group}</dt>
              {tools.map((t) => (
                <dd key={t.name}><code>{t.name}</code> <span className="muted">{firstSentence(t.description)}</span></dd>
              ))}
            </div>
          ))}
        </dl>
      )}
      <p className="muted small">A run on a project also gets the project's sandbox tools.</p>
    </section>
  )
}
