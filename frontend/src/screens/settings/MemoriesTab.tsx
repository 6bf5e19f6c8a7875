import { useQuery } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { useSave } from '../../lib/useSave'
import { Field } from '../../components/Field'
import { api, ok, type Schemas } from '../../lib/api'
import { useAgents } from '../../lib/queries'

type Memory = Schemas['MemoryView']
const KEY = ['memories']

/** Notes placed in agents' instructions: global, or one agent's. */
export function MemoriesTab() {
  const memories = useQuery({ queryKey: KEY, queryFn: () => ok(api.GET('/api/v1/memories')) })
  const agents = useAgents()
  const [editing, setEditing] = useState<Memory | 'new' | null>(null)
  const agentName = (id?: string) => (id ? agents.data?.find((a) => a.id === id)?.name ?? 'an agent' : 'every agent')
  return (
    <div className="tab-page">
      <div className="tab-intro">
        <p className="muted">Memories are notes added to agents' instructions.</p>
        <button className="btn btn-primary" onClick={() => setEditing('new')}>Add memory</button>
      </div>
      {editing && <MemoryForm key={editing === 'new' ? 'new' : editing.id} memory={editing === 'new' ? undefined : editing} onDone={() => setEditing(null)} />}
      {memories.data?.length === 0 && !editing && <p className="empty muted">No memories yet.</p>}
      <ul className="rows">
        {memories.data?.map((m) => (
          <li key={m.id} className="row">
            <div className="row-main">
              <b>{m.key}</b> <span className="muted small">for {agentName(m.agent_config_id)}</span>
              <div className="small clamp">{m.content}</div>
            </div>
            <button className="btn btn-ghost btn-sm" onClick={() => setEditing(m)}>Edit</button>
          </li>
        ))}
      </ul>
    </div>
  )
}

function MemoryForm({ memory, onDone }: { memory?: Memory; onDone: () => void }) {
  const { save: act, errors, error } = useSave(KEY, onDone)
  const agents = useAgents()
  const [form, setForm] = useState({ key: memory?.key ?? '', content: memory?.content ?? '', agent_config_id: memory?.agent_config_id ?? '' })

  function save(e: FormEvent) {
    e.preventDefault()
    const body = { key: form.key, content: form.content, ...(form.agent_config_id ? { agent_config_id: form.agent_config_id } : {}) }
    void act(() => (memory ? ok(api.PUT('/api/v1/memories/{id}', { params: { path: { id: memory.id } }, body })) : ok(api.POST('/api/v1/memories', { body }))))
  }

  return (
    <form className="card form" onSubmit={save} aria-label={memory ? 'Edit memory' : 'New memory'}>
      <div className="grid2">
        <Field label="Key" error={errors.key}>{(id) => <input id={id} value={form.key} onChange={(e) => setForm({ ...form, key: e.target.value })} required />}</Field>
        <Field label="For" error={errors.agent_config_id}>{(id) => (
          <select id={id} value={form.agent_config_id} onChange={(e) => setForm({ ...form, agent_config_id: e.target.value })}>
            <option value="">Every agent (global)</option>
            {agents.data?.map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
          </select>
        )}</Field>
      </div>
      <Field label="Content" error={errors.content}>{(id) => <textarea id={id} rows={4} value={form.content} onChange={(e) => setForm({ ...form, content: e.target.value })} required />}</Field>
      {error && <p className="error-text" role="alert">{error}</p>}
      <div className="form-actions">
        <button className="btn btn-primary">Save</button>
        <button type="button" className="btn btn-ghost" onClick={onDone}>Cancel</button>
        <span className="grow" />
        {memory && <button type="button" className="btn btn-danger" onClick={() => act(() => ok(api.DELETE('/api/v1/memories/{id}', { params: { path: { id: memory.id } } })))}>Delete</button>}
      </div>
    </form>
  )
}
