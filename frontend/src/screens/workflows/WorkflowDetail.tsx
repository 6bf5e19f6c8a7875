import { useQueryClient } from '@tanstack/react-query'
import { useMemo, useState, type FormEvent } from 'react'
import { Field } from '../../components/Field'
import { ApiError, errorText } from '../../lib/api'
import { useAgents, useMe, useSessions, useWorkflow } from '../../lib/queries'
import { navigate, sessionPath, workflowPath } from '../../lib/router'
import type { Workflow } from '../../lib/workflows'
import { openTask } from '../inspector/inspectorState'
import { ScopeButton } from '../settings/ScopeButton'
import { intoConversation, NEW_CONVERSATION, startWorkflow } from './actions'
import { WorkflowTriggers } from './Triggers'
import { WorkflowChart } from './WorkflowChart'

/** What one budget says, in words: "at most 10 step launches · loops at most 3 times". */
export function budgetText(b: Workflow['budget']): string {
  const parts = [
    b.max_steps ? `at most ${b.max_steps} step launches` : '',
    b.max_tokens ? `${b.max_tokens.toLocaleString()} tokens` : '',
    b.max_minutes ? `${b.max_minutes} minutes of step time` : '',
    `a loop taken at most ${b.max_laps || 3} times`,
  ]
  return parts.filter(Boolean).join(' · ')
}

/** One workflow: its description, its sequence drawn, its triggers, its steps, Edit and Run…. */
export function WorkflowDetail({ id }: { id: string }) {
  const workflow = useWorkflow(id)
  const agents = useAgents()
  const me = useMe()
  const [running, setRunning] = useState(false)
  // An agent the caller cannot see is named so, once the list is there to say it.
  const agentName = useMemo(() => {
    const byId = new Map((agents.data ?? []).map((a) => [a.id, a.name]))
    return (aid: string) => byId.get(aid) ?? (agents.data ? 'an agent you cannot see' : undefined)
  }, [agents.data])
  const steps = useMemo(() => (workflow.data?.steps ?? []).map((s) => ({ ...s, agent: agentName(s.agent) })), [workflow.data, agentName])

  if (workflow.isLoading) return <p className="muted">Loading the workflow…</p>
  if (workflow.isError) {
    return (
      <div className="tab-page">
        <p className="error-text">{errorText(workflow.error)}</p>
        <button className="btn" onClick={() => navigate(workflowPath())}>← Workflows</button>
      </div>
    )
  }
  const w = workflow.data!
  const mine = me.data?.id === w.owner_id || me.data?.role === 'admin'
  return (
    <div className="tab-page wf-detail" data-workflow={w.name}>
      <div className="form-top">
        <button type="button" className="btn btn-ghost btn-sm" onClick={() => navigate(workflowPath())}>← Workflows</button>
        <h2>{w.name}</h2>
        <span className="pill">{w.scope}</span>
        <span className="grow" />
        <ScopeButton kind="workflows" id={w.id} scope={w.scope} />
        {mine && <button className="btn btn-sm" onClick={() => navigate(workflowPath(w.id, true))}>Edit</button>}
        <button className="btn btn-primary btn-sm" aria-expanded={running} onClick={() => setRunning((r) => !r)}>Run…</button>
      </div>
      <p className="wf-description">{w.description}</p>
      <p className="muted small">Budget: {budgetText(w.budget)}.</p>
      {running && <RunForm workflow={w} onCancel={() => setRunning(false)} />}
      <WorkflowChart steps={steps} label={`Flowchart of ${w.name}`} />
      <WorkflowTriggers workflowId={w.id} workflowName={w.name} />
      <section aria-labelledby="wf-steps-h">
        <h3 id="wf-steps-h" className="ctx-h">Steps</h3>
        <ol className="wf-steps">
          {w.steps.map((s, i) => (
            <li key={s.id} className="wf-step-line">
              <div>
                <b>{s.name}</b> <span className="muted small">· {agentName(s.agent) ?? '…'}</span>
                {s.gate && <> <span className="wf-badge wf-badge-gate">gate: {s.gate_pass || 'PASS'} / {s.gate_fail || 'FAIL'}</span></>}
                {s.pause_before && <> <span className="wf-badge">pause before</span></>}
                {s.compact_before && <> <span className="wf-badge">compact before</span></>}
              </div>
              <div className="muted small">{edgeWords(w, i)}</div>
              <details>
                <summary className="muted small">Prompt</summary>
                <div className="reasoning-text">{s.prompt}</div>
              </details>
            </li>
          ))}
        </ol>
      </section>
    </div>
  )
}

/** Where a step leads, in words. */
function edgeWords(w: Workflow, i: number): string {
  const s = w.steps[i]
  const name = (to: string) => (to === 'end' ? 'the end' : w.steps.find((x) => x.id === to)?.name ?? to)
  const next = i + 1 < w.steps.length ? w.steps[i + 1].name : 'the end'
  const ok = s.gate ? `${s.gate_pass || 'PASS'} → ` : 'then → '
  const bad = s.gate ? `${s.gate_fail || 'FAIL'} → ` : 'on failure → '
  const success = `${ok}${s.on_success ? name(s.on_success) : next}`
  const failure = s.on_failure && s.on_failure !== 'end' ? `${bad}${name(s.on_failure)}` : `${bad}the workflow fails`
  return `${success}; ${failure}`
}

/** Run…: a conversation of the caller's (a new one, named after the workflow, unless one is chosen) and a brief; started, the execution opens in that conversation. */
function RunForm({ workflow, onCancel }: { workflow: Workflow; onCancel: () => void }) {
  const qc = useQueryClient()
  const sessions = useSessions()
  const list = useMemo(() => (sessions.data ?? []).slice().sort((a, b) => b.updated_at.localeCompare(a.updated_at)), [sessions.data])
  // A new conversation, named after the workflow, unless one is chosen.
  const [chosen, setChosen] = useState(NEW_CONVERSATION)
  const [brief, setBrief] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')
  const [fields, setFields] = useState<Record<string, string>>({})

  async function submit(e: FormEvent) {
    e.preventDefault()
    setError('')
    setFields({})
    if (!brief.trim()) {
      setFields({ input: 'Write the brief: it leads the first step, which sees nothing of the conversation.' })
      return
    }
    setBusy(true)
    try {
      const { sessionId, result: t } = await intoConversation(qc, chosen, workflow.name, workflow.steps[0]?.agent,
        (id) => startWorkflow(qc, workflow.id, id, brief.trim()))
      navigate(sessionPath(sessionId))
      openTask(sessionId, t.task_id)
    } catch (err) {
      setFields(err instanceof ApiError ? err.fields : {})
      setError(errorText(err))
    } finally {
      setBusy(false)
    }
  }

  return (
    <form className="card form wf-run-form" onSubmit={submit} aria-label={`Run ${workflow.name}`} noValidate>
      <h3 className="ctx-h">Run {workflow.name}</h3>
      {error && <p className="error-text" role="alert">{error}</p>}
      <Field label="Conversation" hint="Where the execution reports back; its task list shows it" error={fields.session_id}>{(id, aria) => (
        <select id={id} {...aria} value={chosen} onChange={(e) => setChosen(e.target.value)}>
          <option value={NEW_CONVERSATION}>A new conversation: “{workflow.name}”</option>
          {list.map((s) => <option key={s.id} value={s.id}>{s.name || 'New conversation'}</option>)}
        </select>
      )}</Field>
      <Field label="Brief" hint="What this execution is about: it leads the first step, which sees nothing of the conversation" error={fields.input}>{(id, aria) => (
        <textarea id={id} {...aria} rows={3} value={brief} onChange={(e) => setBrief(e.target.value)} />
      )}</Field>
      <div className="form-actions">
        <button className="btn btn-primary" disabled={busy}>{busy ? 'Starting…' : 'Start'}</button>
        <button type="button" className="btn btn-ghost" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  )
}
