import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { AVATARS, Avatar } from '../../components/Avatar'
import { Field, JsonField, ListField } from '../../components/Field'
import { api, ApiError, errorText, ok, type Agent } from '../../lib/api'
import { splitToolName } from '../../lib/mcpServers'
import { keys, useAgents, useMe, useProviders } from '../../lib/queries'
import { HINTS, TEMPLATES, newAgent, toBody, type AgentBody } from './agentShape'
import { GroupEditor } from './GroupEditor'
import { MCPToolPicker } from './MCPToolPicker'

type Obj = Record<string, unknown>
const OBJECT_GROUPS = ['behavior', 'resilience', 'guardrails', 'session', 'approval', 'compaction', 'model_settings'] as const

/** Every group of an agent's knobs. PUT replaces the whole agent, so the whole object goes back. */
export function AgentForm({ agent, onDone }: { agent?: Agent; onDone: () => void }) {
  const qc = useQueryClient()
  const providers = useProviders()
  const agents = useAgents()
  const me = useMe()
  const guardrails = useQuery({ queryKey: ['guardrails'], queryFn: () => ok(api.GET('/api/v1/guardrails')) })
  const [a, setA] = useState<AgentBody>(() => {
    if (!agent) return newAgent()
    const { id: _i, owner_id: _o, scope: _s, created_at: _c, updated_at: _u, ...body } = agent
    return body
  })
  const [errors, setErrors] = useState<Record<string, string>>({})
  // tools[i] errors, by the name that was sent at i (the list may change after).
  const [toolErrors, setToolErrors] = useState<Record<string, string>>({})
  const [error, setError] = useState('')
  const [saved, setSaved] = useState(false)
  const set = <K extends keyof AgentBody>(k: K, v: AgentBody[K]) => {
    setA((x) => ({ ...x, [k]: v }))
    setSaved(false)
  }

  async function save(e: FormEvent) {
    e.preventDefault()
    setError('')
    setErrors({})
    setToolErrors({})
    const body = toBody(a)
    try {
      if (agent) await ok(api.PUT('/api/v1/agents/{id}', { params: { path: { id: agent.id } }, body }))
      else await ok(api.POST('/api/v1/agents', { body }))
      await qc.invalidateQueries({ queryKey: keys.agents })
      if (agent) setSaved(true)
      else onDone()
    } catch (err) {
      if (err instanceof ApiError) {
        setErrors(err.fields)
        setToolErrors(byToolName(err.fields, body.tools))
      }
      setError(errorText(err))
    }
  }

  async function remove() {
    if (!agent) return
    try {
      await ok(api.DELETE('/api/v1/agents/{id}', { params: { path: { id: agent.id } } }))
      await qc.invalidateQueries({ queryKey: keys.agents })
      onDone()
    } catch (err) {
      setError(errorText(err))
    }
  }

  const known = new Set(['name', 'avatar', 'description', 'instructions', 'model', 'provider_id', 'context_window', 'tools', 'skills', 'handoffs', 'error_handlers',
    ...OBJECT_GROUPS.flatMap((g) => Object.keys({ ...TEMPLATES[g], ...(a[g] as Obj) }).map((k) => `${g}.${k}`))])
  const stray = Object.entries(errors).filter(([k]) => !known.has(k) && !/^tools\[\d+\]$/.test(k))
  const builtins = a.tools.filter((n) => !splitToolName(n))
  const mcpTools = a.tools.filter((n) => splitToolName(n))
  const builtinErrors = builtins.filter((n) => toolErrors[n]).map((n) => `${n}: ${toolErrors[n]}`)

  return (
    <form className="agent-form" onSubmit={save} aria-label={agent ? `Edit ${agent.name}` : 'New agent'}>
      <div className="form-top">
        <button type="button" className="btn btn-ghost btn-sm" onClick={onDone}>← Agents</button>
        <h2>{agent ? agent.name : 'New agent'}</h2>
        <span className="grow" />
        {saved && <span className="pill pill-ok">Saved</span>}
        {agent && <button type="button" className="btn btn-danger btn-sm" onClick={remove}>Delete</button>}
        <button className="btn btn-primary">Save</button>
      </div>
      {error && <p className="error-text" role="alert">{error}</p>}
      {stray.map(([k, v]) => <p key={k} className="error-text">{k}: {v}</p>)}

      <fieldset className="card group">
        <legend>Basics</legend>
        <div className="grid2">
          <Field label="Name" error={errors.name}>{(id) => <input id={id} value={a.name} onChange={(e) => set('name', e.target.value)} required />}</Field>
          <Field label="Model" error={errors.model}>{(id) => <input id={id} value={a.model} placeholder="gpt-5.2, claude-…, echo" onChange={(e) => set('model', e.target.value)} />}</Field>
          <Field label="Provider" error={errors.provider_id}>{(id) => (
            <select id={id} value={a.provider_id} onChange={(e) => set('provider_id', e.target.value)}>
              <option value="">— none —</option>
              {providers.data?.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
            </select>
          )}</Field>
          <Field label="Context window" hint="Declared tokens; 0 = unknown" error={errors.context_window}>{(id) => (
            <input id={id} type="number" value={a.context_window} onChange={(e) => set('context_window', Number(e.target.value) || 0)} />
          )}</Field>
        </div>
        <Field label="Description" hint="What the agent is for, in a sentence (never sent to the model)" error={errors.description}>{(id) => (
          <input id={id} value={a.description} onChange={(e) => set('description', e.target.value)} />
        )}</Field>
        <Field label="Instructions" error={errors.instructions}>{(id) => (
          <textarea id={id} rows={5} value={a.instructions} onChange={(e) => set('instructions', e.target.value)} />
        )}</Field>
        <Field label="Avatar" error={errors.avatar}>{() => (
          <div className="avatar-picker" role="radiogroup" aria-label="Avatar">
            <button type="button" role="radio" aria-checked={!a.avatar} aria-label="No avatar" className={`avatar-choice${!a.avatar ? ' on' : ''}`} onClick={() => set('avatar', '')}>
              <Avatar agent={{ name: a.name || '?', avatar: '' }} size={30} />
            </button>
            {AVATARS.map((n) => {
              const v = `/avatars/${n}.svg`
              return (
                <button type="button" role="radio" aria-checked={a.avatar === v} aria-label={n} key={n} className={`avatar-choice${a.avatar === v ? ' on' : ''}`} onClick={() => set('avatar', v)}>
                  <img src={v} alt="" width={30} height={30} />
                </button>
              )
            })}
          </div>
        )}</Field>
      </fieldset>

      {OBJECT_GROUPS.map((g) => (
        <fieldset key={g} className="card group" data-group={g}>
          <legend>{g.replace('_', ' ')}</legend>
          {g === 'guardrails' && guardrails.data && (
            <p className="muted small">Available: {guardrails.data.map((x) => x.name).join(', ') || 'none'}</p>
          )}
          <GroupEditor path={g} value={(a[g] ?? {}) as Obj} template={TEMPLATES[g]} errors={errors}
            onChange={(v) => set(g, v as never)} />
        </fieldset>
      ))}

      <fieldset className="card group">
        <legend>tools, skills, handoffs, error handlers</legend>
        <Field label="Built-in tools" hint={HINTS.tools} error={[errors.tools, ...builtinErrors].filter(Boolean).join('; ') || undefined}>{(id) => (
          <ListField id={id} value={builtins} onChange={(v) => set('tools', [...v, ...mcpTools])} />
        )}</Field>
        <Field label="MCP tools" hint="Tools of the MCP servers this agent may use, selected by their server__tool names">{() => (
          <MCPToolPicker selected={a.tools} errors={toolErrors} onChange={(v) => set('tools', v)}
            agent={{ scope: agent?.scope ?? 'private', ownerId: agent?.owner_id ?? me.data?.id ?? '' }} />
        )}</Field>
        <Field label="Skills" hint={HINTS.skills} error={errors.skills}>{(id) => <JsonField id={id} rows={2} value={a.skills} onChange={(v) => set('skills', v as string[] | null)} />}</Field>
        <Field label="Handoffs" hint="Agents this one may hand the conversation to" error={errors.handoffs}>{() => (
          <div className="checks">
            {agents.data?.filter((x) => x.id !== agent?.id).map((x) => (
              <label key={x.id} className="check">
                <input type="checkbox" checked={a.handoffs.includes(x.id)}
                  onChange={(e) => set('handoffs', e.target.checked ? [...a.handoffs, x.id] : a.handoffs.filter((h) => h !== x.id))} /> {x.name}
              </label>
            ))}
            {!agents.data?.some((x) => x.id !== agent?.id) && <span className="muted small">No other agents.</span>}
          </div>
        )}</Field>
        <Field label="Error handlers" hint={HINTS.error_handlers} error={errors.error_handlers}>{(id) => (
          <JsonField id={id} value={a.error_handlers} onChange={(v) => set('error_handlers', (v ?? {}) as AgentBody['error_handlers'])} />
        )}</Field>
      </fieldset>
      <div className="form-actions">
        <button className="btn btn-primary">Save</button>
        <button type="button" className="btn btn-ghost" onClick={onDone}>Back</button>
      </div>
    </form>
  )
}

/** The API's tools[i] messages keyed by the name sent at i. */
function byToolName(fields: Record<string, string>, sent: string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(fields)) {
    const m = /^tools\[(\d+)\]$/.exec(k)
    if (m && sent[Number(m[1])] !== undefined) out[sent[Number(m[1])]] = v
  }
  return out
}
