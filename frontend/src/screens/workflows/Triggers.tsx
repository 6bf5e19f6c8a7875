import { useQueryClient } from '@tanstack/react-query'
import { useEffect, useId, useMemo, useState, type FormEvent } from 'react'
import { Field } from '../../components/Field'
import { ApiError, errorText } from '../../lib/api'
import { HUB_PAGE, useAgents, useServerInfo, useSessions, useTriggers, useWorkflows } from '../../lib/queries'
import { navigate, sessionPath } from '../../lib/router'
import { curlExample, lastResult, requestOf, SECRET_ENV, triggerLabel, type Trigger, type TriggerRequest } from '../../lib/triggers'
import { openTask } from '../inspector/inspectorState'
import { Pager } from './Pager'
import { intoConversation, NEW_CONVERSATION } from './actions'
import { createTrigger, deleteTrigger, fireTrigger, rotateSecret, updateTrigger } from './triggerActions'

const when = (iso?: string | null) => {
  if (!iso) return ''
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' })
}

/** The names the trigger rows show: workflows, agents and conversations by id. */
function useNames() {
  const workflows = useWorkflows()
  const agents = useAgents()
  const sessions = useSessions()
  return useMemo(() => {
    const wf = new Map((workflows.data ?? []).map((w) => [w.id, w.name]))
    const ag = new Map((agents.data ?? []).map((a) => [a.id, a.name]))
    const ss = new Map((sessions.data ?? []).map((s) => [s.id, s.name || 'New conversation']))
    return {
      target: (t: Trigger) => t.target === 'workflow'
        ? wf.get(t.workflow_id ?? '') ?? (workflows.data ? 'a workflow you cannot use' : '…')
        : ag.get(t.agent_config_id ?? '') ?? (agents.data ? 'an agent no longer there' : '…'),
      session: (id: string) => ss.get(id) ?? (sessions.data ? 'a conversation' : '…'),
    }
  }, [workflows.data, agents.data, sessions.data])
}

/** What a secret shown once is kept as, while the page that showed it stays: by trigger id. */
type Secrets = Record<string, string>

/**
 * The hub's Triggers: every trigger of the caller's, of either target, one
 * line each (opening in place to where it fires, its brief and how it last
 * went), and the form to add one.
 */
export function TriggersSection() {
  const triggers = useTriggers()
  const [adding, setAdding] = useState(false)
  const [secrets, setSecrets] = useState<Secrets>({})
  const [open, setOpen] = useState('')
  const list = triggers.data ?? []
  return (
    <section className="hub-section" aria-labelledby="wf-triggers">
      <div className="tab-intro">
        <div>
          <h2 id="wf-triggers">Triggers</h2>
          <p className="muted small">Work that starts with nobody asking: on a schedule, or when a signed webhook delivery arrives — a workflow, or an agent answering in a conversation.</p>
        </div>
        <button className="btn btn-primary" aria-expanded={adding} onClick={() => setAdding((a) => !a)}>Add trigger</button>
      </div>
      {adding && (
        <TriggerForm onCancel={() => setAdding(false)} onSaved={(t, secret) => {
          setAdding(false)
          if (secret) setSecrets((s) => ({ ...s, [t.id]: secret }))
          setOpen(t.id)
        }} />
      )}
      {triggers.isLoading && <p className="muted">Loading…</p>}
      {triggers.isError && <p className="error-text">{errorText(triggers.error)}</p>}
      {triggers.isSuccess && !list.length && <p className="empty muted">No triggers yet.</p>}
      <TriggerTable label="Triggers" list={list} open={open} onOpen={setOpen} secrets={secrets} onSecret={(id, s) => setSecrets((x) => ({ ...x, [id]: s }))} />
    </section>
  )
}

/** A workflow's own triggers, on its detail, with "Add trigger" prefilled with it. */
export function WorkflowTriggers({ workflowId, workflowName }: { workflowId: string; workflowName: string }) {
  const triggers = useTriggers()
  const [adding, setAdding] = useState(false)
  const [secrets, setSecrets] = useState<Secrets>({})
  const [open, setOpen] = useState('')
  const list = useMemo(() => (triggers.data ?? []).filter((t) => t.target === 'workflow' && t.workflow_id === workflowId), [triggers.data, workflowId])
  return (
    <section aria-labelledby="wf-triggers-h" className="wf-triggers">
      <div className="tab-intro">
        <h3 id="wf-triggers-h" className="ctx-h">Triggers</h3>
        <button className="btn btn-sm" aria-expanded={adding} onClick={() => setAdding((a) => !a)}>Add trigger</button>
      </div>
      {adding && (
        <TriggerForm preset={{ target: 'workflow', workflow_id: workflowId }} onCancel={() => setAdding(false)} onSaved={(t, secret) => {
          setAdding(false)
          if (secret) setSecrets((s) => ({ ...s, [t.id]: secret }))
          setOpen(t.id)
        }} />
      )}
      {triggers.isError && <p className="error-text">{errorText(triggers.error)}</p>}
      {triggers.isSuccess && !list.length && <p className="muted small">Nothing starts {workflowName} on its own yet: add a schedule or a webhook.</p>}
      <TriggerTable label={`Triggers of ${workflowName}`} list={list} open={open} onOpen={setOpen} secrets={secrets} onSecret={(id, s) => setSecrets((x) => ({ ...x, [id]: s }))} />
    </section>
  )
}

interface TableProps {
  label: string
  list: Trigger[]
  open: string
  onOpen: (id: string) => void
  secrets: Secrets
  onSecret: (id: string, secret: string) => void
}

/** The triggers, 25 to a page; a row opens in place to its detail. */
export function TriggerTable({ label, list, open, onOpen, secrets, onSecret }: TableProps) {
  const names = useNames()
  const [offset, setOffset] = useState(0)
  // A trigger opened from outside (just added) is shown on its page.
  useEffect(() => {
    const i = open ? list.findIndex((t) => t.id === open) : -1
    if (i >= 0 && (i < offset || i >= offset + HUB_PAGE)) setOffset(i - (i % HUB_PAGE))
  }, [open, list, offset])
  const shown = list.slice(offset, offset + HUB_PAGE)
  if (!list.length) return null
  return (
    <>
      <div className="table-scroll">
        <table className="table table-stack triggers" aria-label={label}>
          <thead>
            <tr>
              <th scope="col">Trigger</th><th scope="col">Fires</th><th scope="col">Target</th><th scope="col">Conversation</th>
              <th scope="col">Enabled</th><th scope="col">Next fire</th><th scope="col">Last result</th>
            </tr>
          </thead>
          {shown.map((t) => (
            <TriggerRows key={t.id} trigger={t} names={names} open={open === t.id} onToggle={() => onOpen(open === t.id ? '' : t.id)}
              secret={secrets[t.id]} onSecret={(s) => onSecret(t.id, s)} />
          ))}
        </table>
      </div>
      <Pager label={`${label} pages`} offset={offset} size={HUB_PAGE} total={list.length} onOffset={setOffset} />
    </>
  )
}

type Names = ReturnType<typeof useNames>

/** Opens what a trigger's last fire started: its conversation, with a workflow's execution in the inspector. */
function openStarted(t: Trigger) {
  navigate(sessionPath(t.session_id))
  if (t.target === 'workflow' && t.last_started_id) openTask(t.session_id, t.last_started_id)
}

function LastResultView({ trigger }: { trigger: Trigger }) {
  const r = lastResult(trigger)
  if (r.kind === 'never') return <span className="muted">Never fired</span>
  if (r.kind === 'refused') return <span className="error-text trigger-error">Refused{r.at ? ` ${when(r.at)}` : ''}: {r.error}</span>
  const what = trigger.target === 'workflow' ? "the workflow's execution" : 'the conversation'
  return (
    <button type="button" className="row-open trigger-started" title={`Open ${what}`} onClick={() => openStarted(trigger)}>
      Started{r.at ? <> <time dateTime={r.at}>{when(r.at)}</time></> : ''}
    </button>
  )
}

function TriggerRows({ trigger: t, names, open, onToggle, secret, onSecret }: {
  trigger: Trigger; names: Names; open: boolean; onToggle: () => void; secret?: string; onSecret: (s: string) => void
}) {
  const label = triggerLabel(t)
  const detailId = `trigger-${t.id}`
  return (
    <tbody className="trigger" data-trigger-id={t.id} data-trigger={label}>
      <tr className="trigger-row">
        <td><button className="row-open" aria-expanded={open} aria-controls={open ? detailId : undefined} onClick={onToggle}>{label}</button></td>
        <td className="trigger-fires" data-label="Fires">{t.kind === 'cron' ? <>cron <code>{t.schedule}</code></> : 'webhook'}</td>
        <td className="trigger-target" data-label="Target"><span className="muted small">{t.target === 'workflow' ? 'workflow' : 'agent'}</span> {names.target(t)}</td>
        <td className="trigger-session" data-label="Conversation">{names.session(t.session_id)}</td>
        <td data-label="Enabled"><span className={`pill ${t.enabled ? 'pill-ok' : 'pill-muted'}`}>{t.enabled ? 'Enabled' : 'Disabled'}</span></td>
        <td className="muted" data-label="Next fire">{t.kind === 'cron' && t.enabled && t.next_fire_at ? <time dateTime={t.next_fire_at}>{when(t.next_fire_at)}</time> : '—'}</td>
        <td className="trigger-last" data-label="Last result"><LastResultView trigger={t} /></td>
      </tr>
      {open && (
        <tr className="trigger-detail-row">
          <td colSpan={7} id={detailId}>
            <TriggerDetail trigger={t} names={names} secret={secret} onSecret={onSecret} />
          </td>
        </tr>
      )}
    </tbody>
  )
}

/** One trigger opened: where it fires, its brief, how it last went, and what can be done with it. */
function TriggerDetail({ trigger: t, names, secret, onSecret }: { trigger: Trigger; names: Names; secret?: string; onSecret: (s: string) => void }) {
  const qc = useQueryClient()
  const server = useServerInfo()
  const [editing, setEditing] = useState(false)
  const [confirm, setConfirm] = useState<'' | 'delete' | 'rotate'>('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')
  const [said, setSaid] = useState('')
  const label = triggerLabel(t)

  async function act(f: () => Promise<string | void>) {
    setBusy(true)
    setError('')
    setSaid('')
    try {
      const s = await f()
      if (s) setSaid(s)
    } catch (err) {
      setError(errorText(err))
    } finally {
      setBusy(false)
      setConfirm('')
    }
  }

  if (editing) {
    return <TriggerForm trigger={t} onCancel={() => setEditing(false)} onSaved={() => setEditing(false)} />
  }
  const tz = server.data?.time_zone
  return (
    <div className="trigger-detail" aria-label={`Trigger ${label}`} role="group">
      <dl className="trigger-facts">
        <dt>Fires</dt>
        <dd>
          {t.kind === 'cron'
            ? <>On the schedule <code>{t.schedule}</code>{tz ? ` (${tz})` : ''}{t.enabled && t.next_fire_at ? <>; next at <time dateTime={t.next_fire_at}>{when(t.next_fire_at)}</time></> : ''}</>
            : 'When a signed delivery is POSTed to its hook URL; the delivery\'s body is added to the brief'}
          {!t.enabled && ' — disabled: it fires nothing'}
        </dd>
        <dt>Starts</dt>
        <dd>
          {t.target === 'workflow' ? <>The workflow <b>{names.target(t)}</b>, reporting into </> : <>A message answered by <b>{names.target(t)}</b> in </>}
          <button type="button" className="row-open" onClick={() => navigate(sessionPath(t.session_id))}>{names.session(t.session_id)}</button>
        </dd>
        <dt>Brief</dt>
        <dd><div className="reasoning-text trigger-brief">{t.brief}</div></dd>
        <dt>Last</dt>
        <dd><LastResultView trigger={t} /></dd>
      </dl>
      {error && <p className="error-text" role="alert">{error}</p>}
      {said && <p className="muted small" role="status">{said}</p>}
      <div className="form-actions trigger-actions">
        <button type="button" className="btn btn-sm" disabled={busy}
          onClick={() => act(async () => { await updateTrigger(qc, t.id, requestOf(t, { enabled: !t.enabled })) })}>
          {t.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" className="btn btn-primary btn-sm" disabled={busy || !t.enabled} title={t.enabled ? undefined : 'Enable it to fire it'}
          onClick={() => act(async () => { await fireTrigger(qc, t); return 'Fired: it started.' })}>Fire now</button>
        <button type="button" className="btn btn-sm" disabled={busy} onClick={() => setEditing(true)}>Edit</button>
        {t.kind === 'webhook' && <button type="button" className="btn btn-sm" disabled={busy} onClick={() => setConfirm('rotate')}>Rotate secret</button>}
        <button type="button" className="btn btn-danger btn-sm" disabled={busy} onClick={() => setConfirm('delete')}>Delete</button>
      </div>
      {confirm === 'delete' && (
        <div className="callout callout-warn form-actions" role="group" aria-label="Confirm the deletion">
          <span className="small">Delete {label}? Nothing starts from it again.</span>
          <button type="button" className="btn btn-danger btn-sm" autoFocus disabled={busy} onClick={() => act(() => deleteTrigger(qc, t.id))}>Delete it</button>
          <button type="button" className="btn btn-ghost btn-sm" onClick={() => setConfirm('')}>Keep it</button>
        </div>
      )}
      {confirm === 'rotate' && (
        <div className="callout callout-warn form-actions" role="group" aria-label="Confirm the rotation">
          <span className="small">Mint a new secret? The old one stops working at once: every sender needs the new one.</span>
          <button type="button" className="btn btn-danger btn-sm" autoFocus disabled={busy}
            onClick={() => act(async () => { onSecret((await rotateSecret(qc, t.id)).secret ?? '') })}>Rotate it</button>
          <button type="button" className="btn btn-ghost btn-sm" onClick={() => setConfirm('')}>Keep it</button>
        </div>
      )}
      {t.kind === 'webhook' && t.hook_url && <WebhookHelp hookUrl={t.hook_url} secret={secret} />}
    </div>
  )
}

/** A webhook's address, its secret while it may still be shown, and a signed test delivery to copy and run. */
export function WebhookHelp({ hookUrl, secret }: { hookUrl: string; secret?: string }) {
  const example = curlExample(hookUrl, secret)
  const [copied, setCopied] = useState(false)
  const curlId = useId()
  useEffect(() => {
    if (!copied) return
    const id = setTimeout(() => setCopied(false), 4000)
    return () => clearTimeout(id)
  }, [copied])
  useEffect(() => setCopied(false), [example])
  return (
    <div className="trigger-webhook">
      <div className="field">
        <span className="field-label">Hook URL</span>
        <code className="token-text trigger-hook-url">{hookUrl}</code>
      </div>
      {secret && (
        <div className="callout callout-warn" role="status" aria-label="The signing secret">
          <p><b>Copy this secret now</b> — it is not shown again (rotate it for another). Senders sign each delivery with it.</p>
          <code className="token-text trigger-secret">{secret}</code>
        </div>
      )}
      <div className="field">
        <span className="field-label" id={curlId}>Send a signed test delivery</span>
        <pre className="trigger-curl" aria-labelledby={curlId} tabIndex={0}>{example}</pre>
        <small className="hint">
          {secret
            ? 'A bash snippet with the secret in it: it signs X-Timestamp + "." + the body with HMAC-SHA256, as every sender must.'
            : <>A bash snippet: set <code>{SECRET_ENV}</code> to the trigger's secret first (it was shown once, when made or rotated). It signs X-Timestamp + "." + the body with HMAC-SHA256, as every sender must.</>}
        </small>
      </div>
      <div className="form-actions">
        <button type="button" className="btn btn-sm" onClick={() => navigator.clipboard?.writeText(example).then(() => setCopied(true), () => setCopied(false))}>Copy the example</button>
        <span className="small" role="status">{copied ? 'Copied' : ''}</span>
      </div>
    </div>
  )
}

type FormValues = Required<Omit<TriggerRequest, 'enabled'>> & { enabled: boolean }

/** The fields a form starts from: a trigger's own, or a new one's (with preset applied). */
function initial(t: Trigger | undefined, preset: Partial<TriggerRequest> | undefined): FormValues {
  // A new trigger reports into a new conversation unless one is chosen.
  const base: FormValues = { name: '', kind: 'webhook', schedule: '', target: 'agent', workflow_id: '', agent_config_id: '', session_id: t ? '' : NEW_CONVERSATION,
    brief: '', enabled: true }
  if (t) {
    return { ...base, name: t.name, kind: t.kind, target: t.target, session_id: t.session_id, brief: t.brief, enabled: t.enabled,
      schedule: t.schedule ?? '', workflow_id: t.workflow_id ?? '', agent_config_id: t.agent_config_id ?? '' }
  }
  const p = Object.fromEntries(Object.entries(preset ?? {}).filter(([, x]) => x !== undefined && x !== null))
  return { ...base, ...p }
}

/**
 * Add or edit a trigger: what fires it (its kind stays what it was made
 * as), what it starts, where it reports, the brief. The server judges the
 * fields; its refusals land at them.
 */
export function TriggerForm({ trigger, preset, onSaved, onCancel }: {
  trigger?: Trigger
  preset?: Partial<TriggerRequest>
  onSaved: (t: Trigger, secret?: string) => void
  onCancel: () => void
}) {
  const qc = useQueryClient()
  const sessions = useSessions()
  const agents = useAgents()
  const workflows = useWorkflows()
  const server = useServerInfo()
  const [v, setV] = useState(() => initial(trigger, preset))
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')
  const [fields, setFields] = useState<Record<string, string>>({})
  const conversations = useMemo(() => (sessions.data ?? []).slice().sort((a, b) => b.updated_at.localeCompare(a.updated_at)), [sessions.data])
  const set = (patch: Partial<typeof v>) => setV((x) => ({ ...x, ...patch }))
  const title = trigger ? `Edit ${triggerLabel(trigger)}` : 'Add trigger'

  async function submit(e: FormEvent) {
    e.preventDefault()
    setError('')
    setFields({})
    setBusy(true)
    const body: TriggerRequest = {
      name: v.name.trim(), kind: v.kind, target: v.target, session_id: v.session_id, brief: v.brief, enabled: v.enabled,
      ...(v.kind === 'cron' ? { schedule: v.schedule.trim() } : {}),
      ...(v.target === 'workflow' ? { workflow_id: v.workflow_id } : { agent_config_id: v.agent_config_id }),
    }
    // A new conversation is named after the trigger (or what it starts),
    // with its agent (or the workflow's first step's).
    const wf = workflows.data?.find((w) => w.id === v.workflow_id)
    const named = body.name || (v.target === 'workflow' ? wf?.name : agents.data?.find((a) => a.id === v.agent_config_id)?.name) || 'Trigger'
    const agentId = v.target === 'workflow' ? wf?.steps[0]?.agent : v.agent_config_id || undefined
    try {
      if (trigger) onSaved(await updateTrigger(qc, trigger.id, body))
      else {
        const { result: t } = await intoConversation(qc, v.session_id, named, agentId, (id) => createTrigger(qc, { ...body, session_id: id }))
        onSaved(t, t.secret)
      }
    } catch (err) {
      const f = err instanceof ApiError ? err.fields : {}
      setFields(f)
      const n = Object.keys(f).length
      setError(n ? `${n === 1 ? '1 field needs' : `${n} fields need`} attention: ${errorText(err)}` : errorText(err))
    } finally {
      setBusy(false)
    }
  }

  const tz = server.data?.time_zone
  return (
    <form className="card form trigger-form" onSubmit={submit} aria-label={title} noValidate>
      <h3 className="ctx-h">{title}</h3>
      {error && <p className="error-text" role="alert">{error}</p>}
      <div className="grid2">
        <Field label="Name" hint="For people; empty names it by what fires it" error={fields.name}>{(id, aria) => (
          <input id={id} {...aria} value={v.name} placeholder="nightly report" onChange={(e) => set({ name: e.target.value })} />
        )}</Field>
        <Field label="Kind" hint={trigger ? 'It stays what it was made as' : 'A schedule, or a signed POST to its hook URL'} error={fields.kind}>{(id, aria) => (
          <select id={id} {...aria} value={v.kind} disabled={!!trigger} onChange={(e) => set({ kind: e.target.value as 'cron' | 'webhook' })}>
            <option value="webhook">webhook</option>
            <option value="cron">cron</option>
          </select>
        )}</Field>
      </div>
      {v.kind === 'cron' && (
        <Field label="Schedule" error={fields.schedule}
          hint={<>Five fields (minute hour day month weekday) or a macro: <code>0 9 * * 1-5</code>, <code>@daily</code>, <code>@every 30m</code> — in the server's time zone{tz ? <> (<b>{tz}</b>)</> : ''}</>}>
          {(id, aria) => <input id={id} {...aria} className="mono" value={v.schedule} placeholder="0 9 * * 1-5" onChange={(e) => set({ schedule: e.target.value })} />}
        </Field>
      )}
      <div className="grid2">
        <Field label="Target" hint="A workflow's execution, or the brief as a message an agent answers" error={fields.target}>{(id, aria) => (
          <select id={id} {...aria} value={v.target} onChange={(e) => set({ target: e.target.value as 'workflow' | 'agent' })}>
            <option value="agent">agent</option>
            <option value="workflow">workflow</option>
          </select>
        )}</Field>
        {v.target === 'workflow' ? (
          <Field label="Workflow" error={fields.workflow_id}>{(id, aria) => (
            <select id={id} {...aria} value={v.workflow_id} onChange={(e) => set({ workflow_id: e.target.value })}>
              <option value="">Choose a workflow…</option>
              {(workflows.data ?? []).map((w) => <option key={w.id} value={w.id}>{w.name}</option>)}
            </select>
          )}</Field>
        ) : (
          <Field label="Agent" error={fields.agent_config_id}>{(id, aria) => (
            <select id={id} {...aria} value={v.agent_config_id} onChange={(e) => set({ agent_config_id: e.target.value })}>
              <option value="">Choose an agent…</option>
              {(agents.data ?? []).map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
            </select>
          )}</Field>
        )}
      </div>
      <Field label="Conversation" hint="Where the work reports back; deleting it deletes the trigger" error={fields.session_id}>{(id, aria) => (
        <select id={id} {...aria} value={v.session_id} onChange={(e) => set({ session_id: e.target.value })}>
          {trigger ? <option value="">Choose a conversation…</option> : <option value={NEW_CONVERSATION}>A new conversation, named after the trigger</option>}
          {conversations.map((s) => <option key={s.id} value={s.id}>{s.name || 'New conversation'}</option>)}
        </select>
      )}</Field>
      <Field label="Brief" error={fields.brief}
        hint={v.kind === 'webhook' ? 'What the started work is asked to do, written now for later; each delivery\'s body is added to it' : 'What the started work is asked to do, written now for later'}>{(id, aria) => (
        <textarea id={id} {...aria} rows={3} value={v.brief} onChange={(e) => set({ brief: e.target.value })} />
      )}</Field>
      <Field label="Enabled" inline hint="A disabled trigger fires nothing" error={fields.enabled}>{(id, aria) => (
        <input id={id} {...aria} type="checkbox" checked={v.enabled} onChange={(e) => set({ enabled: e.target.checked })} />
      )}</Field>
      <div className="form-actions">
        <button className="btn btn-primary" disabled={busy}>{busy ? 'Saving…' : trigger ? 'Save' : 'Add'}</button>
        <button type="button" className="btn btn-ghost" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  )
}
