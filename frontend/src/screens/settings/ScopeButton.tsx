import { useQueryClient } from '@tanstack/react-query'
import { api, errorText, ok } from '../../lib/api'
import { notify } from '../../lib/notices'
import { useMe } from '../../lib/queries'

/** Admins publish a private provider, agent, MCP server, workflow or skill to everyone (global), or take it back. */
export function ScopeButton({ kind, id, scope }: { kind: 'providers' | 'agents' | 'mcp-servers' | 'workflows' | 'skills'; id: string; scope: 'private' | 'global' }) {
  const qc = useQueryClient()
  const me = useMe()
  if (me.data?.role !== 'admin') return null
  const next = scope === 'global' ? 'private' : 'global'
  async function flip() {
    try {
      const opts = { params: { path: { id } }, body: { scope: next } } as const
      if (kind === 'providers') await ok(api.POST('/api/v1/providers/{id}/scope', opts))
      else if (kind === 'agents') await ok(api.POST('/api/v1/agents/{id}/scope', opts))
      else if (kind === 'workflows') await ok(api.POST('/api/v1/workflows/{id}/scope', opts))
      else if (kind === 'skills') await ok(api.POST('/api/v1/skills/{id}/scope', opts))
      else await ok(api.POST('/api/v1/mcp-servers/{id}/scope', opts))
      await qc.invalidateQueries({ queryKey: [kind] })
    } catch (e) {
      notify(errorText(e))
    }
  }
  return <button className="btn btn-ghost btn-sm" onClick={flip}>{scope === 'global' ? 'Unpublish' : 'Publish'}</button>
}
