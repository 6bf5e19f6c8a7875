import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useRef, useState, type FormEvent } from 'react'
import { AVATARS, Avatar } from '../../components/Avatar'
import { Field, JsonField } from '../../components/Field'
import { api, ApiError, errorText, ok, type Agent } from '../../lib/api'
import { splitToolName } from '../../lib/mcpServers'
import { useSkills } from '../../lib/skills'
import { keys, useAgents, useMe, useProviders, useSelectableTools } from '../../lib/queries'
import { agentFieldKeys, placeErrors, type PlacedErrors } from './agentErrors'
import { HINTS, TEMPLATES, newAgent, toBody, type AgentBody } from './agentShape'
import { FormSection, revealProblems } from './FormSection'
import { GroupEditor } from './GroupEditor'
import { MCPToolPicker } from './MCPToolPicker'
import { EffectiveTools } from './EffectiveTools'
import { ModelField } from './ModelField'
import { SkillPicker } from './SkillPicker'

type Obj = Record<string, unknown>
const NO_ERRORS: PlacedErrors = { byField: {}, byTool: {}, stray: [] }
/** Behavior knobs about being handed to: drawn with the handoffs, not with the rest of behavior. */
const HANDOFF_KNOBS = ['handoff_description', 'handoff_input_filter']

/**
 * Every knob of an agent, the common ones first (who it is, its model,
 * instructions, tools and approvals) and the advanced groups folded below.
 * PUT replaces the whole agent, so the whole object goes back. The server
 * is the one judge of a value: its refusals land next to their fields
 * (agentErrors), and a folded section holding one opens.
 */
export function AgentForm({ agent, onDone }: { agent?: Agent; onDone: () => void }) {
  const qc = useQueryClient()
  const providers = useProviders()
  const agents = useAgents()
  const me = useMe()
  const selectable = useSelectableTools()
  // A checkbox rewrites the tools list, so the free-text field under it
  // starts over from the new list (it keeps its own text while typed in).
  const skills = useSkills()
  const guardrails = useQuery({ queryKey: ['guardrails'], queryFn: () => ok(api.GET('/api/v1/guardrails')) })
  const [a, setA] = useState<AgentBody>(() => {
    if (!agent) return newAgent()
    const { id: _i, owner_id: _o, scope: _s, created_at: _c, updated_at: _u, ...body } = agent
    return body
  })
  const [placed, setPlaced] = useState<PlacedErrors>(NO_ERRORS)
  const [error, setError] = useState('')
  const [saved, setSaved] = useState(false)
  // Counts refused saves: each one opens the sections holding a problem, once it is drawn.
  const [refusals, setRefusals] = useState(0)
  const form = useRef<HTMLFormElement>(null)
  useEffect(() => {
    if (refusals) revealProblems(form.current)
  }, [refusals])
  const set = <K extends keyof AgentBody>(k: K, v: AgentBody[K]) => {
    setA((x) => ({ ...x, [k]: v }))
    setSaved(false)
  }
  const agentName = (id: string) => agents.data?.find((x) => x.id === id)?.name ?? id
  const skillName = (id: string) => (Array.isArray(skills.data) ? skills.data.find((x) => x.id === id)?.model_name : undefined) ?? id

  async function save(e: FormEvent) {
    e.preventDefault()
    setError('')
    setPlaced(NO_ERRORS)
    // A JSON text that does not parse never reached the agent's value: sending would save the last one that did.
    const unparsed = Array.from(form.current?.querySelectorAll<HTMLTextAreaElement>('textarea[data-parse-error]') ?? [])
      .map((t) => t.labels?.[0]?.textContent ?? t.id)
    if (unparsed.length) {
      setError(`Not saved: ${unparsed.join(', ')} ${unparsed.length === 1 ? 'is' : 'are'} not valid JSON yet.`)
      setRefusals((n) => n + 1)
      return
    }
    const body = toBody(a)
    try {
      if (agent) await ok(api.PUT('/api/v1/agents/{id}', { params: { path: { id: agent.id } }, body }))
      else await ok(api.POST('/api/v1/agents', { body }))
      await qc.invalidateQueries({ queryKey: keys.agents })
      await qc.invalidateQueries({ queryKey: ['agent-tools'] })
      if (agent) setSaved(true)
      else onDone()
    } catch (err) {
      const fields = err instanceof ApiError ? err.fields : {}
      const n = Object.keys(fields).length
      setPlaced(placeErrors(fields, agentFieldKeys(body), body, (field, v) => (field === 'handoffs' ? agentName(v) : field === 'skills' ? skillName(v) : v)))
      setError(n ? `Not saved: ${n === 1 ? 'one field needs' : `${n} fields need`} attention (see the messages next to them).` : errorText(err))
      setRefusals((x) => x + 1)
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

  const errors = placed.byField
  /** How many refused fields a section holds: those under any of its keys, but not under except. */
  const problems = (under: string[], except: string[] = []) =>
    Object.keys(errors).filter((k) => !except.includes(k) && under.some((p) => k === p || k.startsWith(`${p}.`))).length
  const builtins = a.tools.filter((n) => !splitToolName(n))
  const catalog = selectable.data ?? []
  const mcpTools = a.tools.filter((n) => splitToolName(n))
  const builtinErrors = builtins.filter((n) => placed.byTool[n]).map((n) => `${n}: ${placed.byTool[n]}`)
  const handoffKnobs = HANDOFF_KNOBS.map((k) => `behavior.${k}`)
  const group = <G extends 'behavior' | 'resilience' | 'guardrails' | 'session' | 'approval' | 'compaction' | 'model_settings'>(g: G, pick?: { only?: string[]; omit?: string[] }) => (
    <GroupEditor path={g} value={(a[g] ?? {}) as Obj} template={TEMPLATES[g]} errors={errors} onChange={(v) => set(g, v as never)} {...pick} />
  )

  return (
    <form ref={form} className="agent-form" onSubmit={save} noValidate aria-label={agent ? `Edit ${agent.name}` : 'New agent'}>
      <div className="form-top">
        <button type="button" className="btn btn-ghost btn-sm" onClick={onDone}>← Agents</button>
        <h2>{agent ? agent.name : 'New agent'}</h2>
        <span className="grow" />
        {saved && <span className="pill pill-ok" role="status">Saved</span>}
        {agent && <button type="button" className="btn btn-danger btn-sm" onClick={remove}>Delete</button>}
        <button className="btn btn-primary">Save</button>
      </div>
      {(error || placed.stray.length > 0) && (
        <div className="form-errors" role="alert" aria-label="Why the agent was not saved">
          {error && <p className="error-text">{error}</p>}
          {placed.stray.length > 0 && (
            <ul>{placed.stray.map(([k, v]) => <li key={k} className="error-text"><code>{k}</code>: {v}</li>)}</ul>
          )}
        </div>
      )}

      <fieldset className="card group" data-group="basics">
        <legend>Basics</legend>
        <div className="grid2">
          <Field label="Name" hint="How you and other agents refer to it" error={errors.name}>{(id, aria) => (
            <input id={id} {...aria} value={a.name} onChange={(e) => set('name', e.target.value)} required aria-required />
          )}</Field>
          <Field label="Description" hint="What the agent is for, in a sentence (never sent to the model)" error={errors.description}>{(id, aria) => (
            <input id={id} {...aria} value={a.description} onChange={(e) => set('description', e.target.value)} />
          )}</Field>
          <Field label="Provider" hint="The endpoint and key the agent reaches its model through" error={errors.provider_id}>{(id, aria) => (
            <select id={id} {...aria} value={a.provider_id} onChange={(e) => set('provider_id', e.target.value)}>
              <option value="">— none —</option>
              {providers.data?.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
            </select>
          )}</Field>
          <ModelField providerId={a.provider_id} value={a.model} error={errors.model} onChange={(v) => set('model', v)} />
        </div>
        <Field label="Instructions" hint="What the agent is told before every conversation: its role, tone and rules" error={errors.instructions}>{(id, aria) => (
          <textarea id={id} {...aria} rows={6} value={a.instructions} onChange={(e) => set('instructions', e.target.value)} />
        )}</Field>
        <Field label="Avatar" group error={errors.avatar}>{(_, aria) => (
          <div className="avatar-picker" role="radiogroup" {...aria}>
            <button type="button" role="radio" aria-checked={!a.avatar} aria-label="No picture (the name's initial)" className={`avatar-choice${!a.avatar ? ' on' : ''}`} onClick={() => set('avatar', '')}>
              <Avatar agent={{ name: a.name.trim() || '?', avatar: '' }} size={30} />
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

      <fieldset className="card group" data-group="tools">
        <legend>Tools and approvals</legend>
        {catalog.length > 0 && (
          <Field label="Program tools" group hint="Tools the program running this workbench offers; a checked one is given to the agent">{(_, aria) => (
            <div className="tool-catalog" role="group" {...aria}>
              {catalog.map((t) => (
                <label key={t.name} className="check" title={t.description}>
                  <input type="checkbox" checked={builtins.includes(t.name)}
                    onChange={(e) => {
                      set('tools', [...(e.target.checked ? [...builtins, t.name] : builtins.filter((n) => n !== t.name)), ...mcpTools])
                    }} />
                  <span><code>{t.name}</code> <span className="muted">{t.description}</span></span>
                </label>
              ))}
            </div>
          )}</Field>
        )}
        <Field label="MCP tools" group hint="Tools of the MCP servers this agent may use, selected by their server__tool names">{() => (
          <MCPToolPicker selected={a.tools} errors={placed.byTool} onChange={(v) => set('tools', v)}
            agent={{ scope: agent?.scope ?? 'private', ownerId: agent?.owner_id ?? me.data?.id ?? '' }} />
        )}</Field>
        <EffectiveTools agentId={agent?.id} error={[errors.tools, ...builtinErrors].filter(Boolean).join('; ') || undefined} />
        <div data-group="approval">{group('approval')}</div>
      </fieldset>

      <div className="form-advanced">
        <h3>Advanced</h3>
        <p className="muted small">Folded until you need them; a section the server finds a problem in opens by itself.</p>
      </div>
      <FormSection group="model_settings" title="Model settings" about="Context window, temperature, reasoning, answer length" problems={problems(['context_window', 'model_settings'])}>
        <Field label="Context window" hint={HINTS.context_window} error={errors.context_window}>{(id, aria) => (
          <input id={id} {...aria} type="number" value={a.context_window} onChange={(e) => set('context_window', Number(e.target.value) || 0)} />
        )}</Field>
        {group('model_settings')}
      </FormSection>
      <FormSection group="behavior" title="Behavior and limits" about="Turns per run, tool calls at once, when to stop" problems={problems(['behavior'], handoffKnobs)}>
        {group('behavior', { omit: HANDOFF_KNOBS })}
      </FormSection>
      <FormSection group="handoffs" title="Handoffs" about="Other agents this one may pass the conversation to" problems={problems(['handoffs', ...handoffKnobs])}>
        <Field label="May hand off to" group hint="Each becomes a transfer_to_… tool the model may call" error={errors.handoffs}>{(_, aria) => (
          <div className="checks" role="group" {...aria}>
            {agents.data?.filter((x) => x.id !== agent?.id).map((x) => (
              <label key={x.id} className="check">
                <input type="checkbox" checked={a.handoffs.includes(x.id)}
                  onChange={(e) => set('handoffs', e.target.checked ? [...a.handoffs, x.id] : a.handoffs.filter((h) => h !== x.id))} /> {x.name}
              </label>
            ))}
            {!agents.data?.some((x) => x.id !== agent?.id) && <span className="muted small">No other agents.</span>}
          </div>
        )}</Field>
        {group('behavior', { only: HANDOFF_KNOBS })}
      </FormSection>
      <FormSection group="guardrails" title="Guardrails and output schema" about="Checks on what goes in and out; a JSON Schema for structured answers" problems={problems(['guardrails'])}>
        {guardrails.data && <p className="muted small">Available guardrails: {guardrails.data.map((x) => x.name).join(', ') || 'none yet'}</p>}
        {group('guardrails')}
      </FormSection>
      <FormSection group="error_handlers" title="Error handlers" about="A fixed answer instead of a failed run" problems={problems(['error_handlers'])}>
        <Field label="Error handlers" hint={HINTS.error_handlers} error={errors.error_handlers}>{(id, aria) => (
          <JsonField id={id} aria={aria} value={a.error_handlers} onChange={(v) => set('error_handlers', (v ?? {}) as AgentBody['error_handlers'])} />
        )}</Field>
      </FormSection>
      <FormSection group="resilience" title="Retries and fallbacks" about="Retrying failed model calls; other models to try" problems={problems(['resilience'])}>
        {group('resilience')}
      </FormSection>
      <FormSection group="history" title="History and compaction" about="How much history each turn sends; folding old history into a summary" problems={problems(['session', 'compaction'])}>
        <div data-group="session">{group('session')}</div>
        <div data-group="compaction">{group('compaction')}</div>
      </FormSection>
      <FormSection group="skills" title="Skills" about="Which skills the agent may load" problems={problems(['skills'])}>
        <Field label="Skills" group hint={HINTS.skills} error={errors.skills}>{(_, aria) => (
          <SkillPicker value={a.skills} aria={aria} onChange={(v) => set('skills', v)}
            agent={{ scope: agent?.scope ?? 'private', ownerId: agent?.owner_id ?? me.data?.id ?? '' }} />
        )}</Field>
      </FormSection>

      <div className="form-actions">
        <button className="btn btn-primary">Save</button>
        <button type="button" className="btn btn-ghost" onClick={onDone}>Back</button>
      </div>
    </form>
  )
}
