import { useQueryClient } from '@tanstack/react-query'
import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react'
import { Field } from '../../components/Field'
import { Icon } from '../../components/Icon'
import { api, ApiError, errorText, ok, type Agent } from '../../lib/api'
import { keys, useAgents, useWorkflow } from '../../lib/queries'
import { navigate, workflowPath } from '../../lib/router'
import type { Workflow } from '../../lib/workflows'
import { revealProblems } from '../settings/FormSection'
import {
  draftFlow, errorCount, moveStep, newStep, placeWorkflowErrors, removeStep, toDraft, toSpec,
  type Draft, type DraftBudget, type DraftStep, type PlacedWorkflowErrors,
} from './draft'
import { END } from './flow'
import { WorkflowChart } from './WorkflowChart'

const NO_ERRORS: PlacedWorkflowErrors = { top: {}, steps: {}, stray: [] }

/** The editor of a stored workflow (loaded first) or of a new one. */
export function WorkflowEditor({ workflowId }: { workflowId?: string }) {
  const workflow = useWorkflow(workflowId)
  const agents = useAgents()
  if (workflowId && workflow.isLoading) return <p className="muted">Loading the workflow…</p>
  if (workflowId && workflow.isError) return <p className="error-text">{errorText(workflow.error)}</p>
  if (!agents.data) return <p className="muted">Loading the agents…</p>
  return <EditorForm workflow={workflow.data} agents={agents.data} />
}

const BUDGET: [keyof DraftBudget, string, string][] = [
  ['max_steps', 'Max step launches', 'Per execution, retries included; 0 = no bound (50 at most anyway)'],
  ['max_tokens', 'Max tokens', 'Input plus output of every model call of the execution; 0 = no bound'],
  ['max_minutes', 'Max minutes', 'The step runs’ own time (a wait for a person is free); 0 = no bound'],
  ['max_laps', 'Max laps', 'Times one loop (a backward edge) may be taken; 0 = 3'],
]

/**
 * A workflow's definition, written: its name and description, the steps in
 * order (each with its agent, prompt, gate and edges; added, removed and
 * moved), the budget, and the flowchart of what is written so far. The
 * server judges it whole: its refusals land next to their fields, a step's
 * on the step that was sent (draft.ts), as the agent form's do.
 */
function EditorForm({ workflow, agents }: { workflow?: Workflow; agents: Agent[] }) {
  const qc = useQueryClient()
  const [d, setD] = useState<Draft>(() => toDraft(workflow, agents[0]?.id ?? ''))
  const [placed, setPlaced] = useState<PlacedWorkflowErrors>(NO_ERRORS)
  const [error, setError] = useState('')
  const [saved, setSaved] = useState(false)
  const [saving, setSaving] = useState(false)
  const [confirmDelete, setConfirmDelete] = useState(false)
  const [refusals, setRefusals] = useState(0)
  const form = useRef<HTMLFormElement>(null)
  useEffect(() => {
    if (refusals) revealProblems(form.current)
  }, [refusals])

  const agentName = useMemo(() => {
    const byId = new Map(agents.map((a) => [a.id, a.name]))
    return (id: string) => byId.get(id)
  }, [agents])
  const preview = useMemo(() => draftFlow(d, agentName), [d, agentName])

  const change = (f: (x: Draft) => Draft) => {
    setD(f)
    setSaved(false)
  }
  const setStep = (key: string, patch: Partial<DraftStep>) => change((x) => ({ ...x, steps: x.steps.map((s) => (s.key === key ? { ...s, ...patch } : s)) }))

  async function save(e: FormEvent) {
    e.preventDefault()
    setError('')
    setPlaced(NO_ERRORS)
    setSaving(true)
    const body = toSpec(d)
    const sent = d.steps.map((s) => s.key)
    try {
      const w = workflow
        ? await ok(api.PUT('/api/v1/workflows/{id}', { params: { path: { id: workflow.id } }, body }))
        : await ok(api.POST('/api/v1/workflows', { body }))
      qc.setQueryData(keys.workflow(w.id), w)
      await qc.invalidateQueries({ queryKey: keys.workflows, exact: true })
      if (workflow) {
        // New steps now have ids: the draft takes them, so a second save keeps them.
        setD(toDraft(w))
        setSaved(true)
      } else navigate(workflowPath(w.id), true)
    } catch (err) {
      const fields = err instanceof ApiError ? err.fields : {}
      const p = placeWorkflowErrors(fields, sent)
      const n = errorCount(p)
      setPlaced(p)
      setError(n ? `Not saved: ${n === 1 ? 'one field needs' : `${n} fields need`} attention (see the messages next to them).` : errorText(err))
      setRefusals((x) => x + 1)
    } finally {
      setSaving(false)
    }
  }

  async function remove() {
    if (!workflow) return
    try {
      await ok(api.DELETE('/api/v1/workflows/{id}', { params: { path: { id: workflow.id } } }))
      qc.removeQueries({ queryKey: keys.workflow(workflow.id) })
      await qc.invalidateQueries({ queryKey: keys.workflows, exact: true })
      navigate(workflowPath(), true)
    } catch (err) {
      setError(errorText(err))
      setConfirmDelete(false)
    }
  }

  const back = () => navigate(workflow ? workflowPath(workflow.id) : workflowPath())
  const top = placed.top
  return (
    <form ref={form} className="agent-form wf-editor" onSubmit={save} noValidate aria-label={workflow ? `Edit ${workflow.name}` : 'New workflow'}>
      <div className="form-top">
        <button type="button" className="btn btn-ghost btn-sm" onClick={back}>← {workflow ? workflow.name : 'Workflows'}</button>
        <h2>{workflow ? `Edit ${workflow.name}` : 'New workflow'}</h2>
        <span className="grow" />
        {saved && <span className="pill pill-ok" role="status">Saved</span>}
        {workflow && !confirmDelete && <button type="button" className="btn btn-danger btn-sm" onClick={() => setConfirmDelete(true)}>Delete</button>}
        {workflow && confirmDelete && (
          <span className="inline" role="group" aria-label="Confirm the deletion">
            <span className="small">Delete {workflow.name}? Executions in flight finish on their copy.</span>
            <button type="button" className="btn btn-danger btn-sm" onClick={remove}>Delete it</button>
            <button type="button" className="btn btn-ghost btn-sm" onClick={() => setConfirmDelete(false)}>Keep it</button>
          </span>
        )}
        <button className="btn btn-primary" disabled={saving}>Save</button>
      </div>
      {(error || placed.stray.length > 0) && (
        <div className="form-errors" role="alert" aria-label="Why the workflow was not saved">
          {error && <p className="error-text">{error}</p>}
          {placed.stray.length > 0 && <ul>{placed.stray.map(([k, v]) => <li key={k} className="error-text"><code>{k}</code>: {v}</li>)}</ul>}
        </div>
      )}

      <div className="wf-editor-grid">
        <div className="wf-editor-main">
          <fieldset className="card group" data-group="basics">
            <legend>Basics</legend>
            <Field label="Name" hint="Unique among your workflows, whatever its case; /workflow <name> starts it" error={top.name}>{(id, aria) => (
              <input id={id} {...aria} value={d.name} onChange={(e) => change((x) => ({ ...x, name: e.target.value }))} required aria-required />
            )}</Field>
            <Field label="Description" hint="What it is for: an agent matches a request against it when it offers workflows" error={top.description}>{(id, aria) => (
              <textarea id={id} {...aria} rows={2} value={d.description} onChange={(e) => change((x) => ({ ...x, description: e.target.value }))} required aria-required />
            )}</Field>
          </fieldset>

          <fieldset className="card group" data-group="steps">
            <legend>Steps</legend>
            <p className="muted small">In order: success falls through to the next step and the last one finishes; a failure fails the execution — unless a step says where to go instead. Naming an earlier step makes a loop.</p>
            {top.steps && <p className="error-text" role="alert">{top.steps}</p>}
            <ol className="wf-step-list">
              {d.steps.map((s, i) => (
                <li key={s.key}>
                  <StepEditor step={s} index={i} steps={d.steps} agents={agents} errors={placed.steps[s.key] ?? {}}
                    onChange={(patch) => setStep(s.key, patch)}
                    onMove={(delta) => change((x) => ({ ...x, steps: moveStep(x.steps, i, delta) }))}
                    onRemove={() => change((x) => ({ ...x, steps: removeStep(x.steps, s.key) }))} />
                </li>
              ))}
            </ol>
            <div>
              <button type="button" className="btn btn-sm" onClick={() => change((x) => ({ ...x, steps: [...x.steps, newStep({ agent: agents[0]?.id ?? '' })] }))}>
                <Icon name="plus" size={14} /> Add step
              </button>
            </div>
          </fieldset>

          <fieldset className="card group" data-group="budget">
            <legend>Budget</legend>
            <p className="muted small">What every execution answers to, checked before each step launches: over any bound it stops, failed, saying which.</p>
            <div className="group-grid">
              {BUDGET.map(([k, label, hint]) => (
                <Field key={k} label={label} hint={hint} error={top[`budget.${k}`]}>{(id, aria) => (
                  <input id={id} {...aria} type="number" min={0} value={d.budget[k] || ''} placeholder="0"
                    onChange={(e) => change((x) => ({ ...x, budget: { ...x.budget, [k]: Math.max(0, Math.trunc(Number(e.target.value) || 0)) } }))} />
                )}</Field>
              ))}
            </div>
            {top.budget && <p className="error-text">{top.budget}</p>}
          </fieldset>

          <div className="form-actions">
            <button className="btn btn-primary" disabled={saving}>Save</button>
            <button type="button" className="btn btn-ghost" onClick={back}>Cancel</button>
          </div>
        </div>
        <section className="card group wf-editor-aside" aria-labelledby="wf-preview-h">
          <h3 id="wf-preview-h" className="ctx-h">The sequence as written</h3>
          <WorkflowChart steps={preview} label="Flowchart of the workflow as written" maxHeight={520} />
        </section>
      </div>
    </form>
  )
}

interface StepProps {
  step: DraftStep
  index: number
  steps: DraftStep[]
  agents: Agent[]
  errors: Record<string, string>
  onChange: (patch: Partial<DraftStep>) => void
  onMove: (delta: number) => void
  onRemove: () => void
}

function StepEditor({ step: s, index: i, steps, agents, errors, onChange, onMove, onRemove }: StepProps) {
  const n = i + 1
  const title = `Step ${n}`
  const targets = steps.map((x, j) => ({ key: x.key, label: `Step ${j + 1}: ${x.name.trim() || 'unnamed'}${x.key === s.key ? ' (itself)' : ''}` }))
  const known = agents.some((a) => a.id === s.agent)
  return (
    <fieldset className="wf-step" aria-label={title} data-step-key={s.key}>
      <legend>
        {title}{s.name.trim() ? ` · ${s.name.trim()}` : ''}
      </legend>
      <div className="wf-step-tools">
        <button type="button" className="icon-btn" aria-label={`Move step ${n} up`} title="Move up" disabled={i === 0} onClick={() => onMove(-1)}>↑</button>
        <button type="button" className="icon-btn" aria-label={`Move step ${n} down`} title="Move down" disabled={i === steps.length - 1} onClick={() => onMove(1)}>↓</button>
        <button type="button" className="icon-btn" aria-label={`Remove step ${n}`} title="Remove" disabled={steps.length === 1} onClick={onRemove}><Icon name="trash" size={14} /></button>
      </div>
      <div className="grid2">
        <Field label="Name" hint="Unique in the workflow; edges and the progress line name it" error={errors.name}>{(id, aria) => (
          <input id={id} {...aria} value={s.name} onChange={(e) => onChange({ name: e.target.value })} />
        )}</Field>
        <Field label="Agent" hint="Who runs the step, with its model and tools" error={errors.agent}>{(id, aria) => (
          <select id={id} {...aria} value={s.agent} onChange={(e) => onChange({ agent: e.target.value })}>
            {!s.agent && <option value="">— pick an agent —</option>}
            {s.agent && !known && <option value={s.agent}>An agent you cannot see</option>}
            {agents.map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
          </select>
        )}</Field>
      </div>
      <Field label="Prompt" hint={i === 0 ? 'Starts the step’s turn; the brief leads it on this first step' : 'Starts the step’s turn; earlier steps’ work is in the transcript it reads'} error={errors.prompt}>{(id, aria) => (
        <textarea id={id} {...aria} rows={3} value={s.prompt} onChange={(e) => onChange({ prompt: e.target.value })} />
      )}</Field>
      <div className="checks">
        <label className="check" title="The step checks: the last line of its answer, a pass or a fail word, picks the edge">
          <input type="checkbox" checked={s.gate} onChange={(e) => onChange({ gate: e.target.checked })} /> Gate
        </label>
        <label className="check" title="Hold before the step until a person approves it from the conversation that asked">
          <input type="checkbox" checked={s.pause_before} onChange={(e) => onChange({ pause_before: e.target.checked })} /> Pause before
        </label>
        <label className="check" title="Fold the conversation into a summary before the step, with its agent's compaction settings">
          <input type="checkbox" checked={s.compact_before} onChange={(e) => onChange({ compact_before: e.target.checked })} /> Compact before
        </label>
      </div>
      {['gate', 'pause_before', 'compact_before'].filter((k) => errors[k]).map((k) => (
        <p key={k} className="error-text has-error" role="alert">{k}: {errors[k]}</p>
      ))}
      {s.gate && (
        <div className="grid2">
          <Field label="Pass word" hint="The answer's last line for success; empty = PASS" error={errors.gate_pass}>{(id, aria) => (
            <input id={id} {...aria} value={s.gate_pass} placeholder="PASS" onChange={(e) => onChange({ gate_pass: e.target.value })} />
          )}</Field>
          <Field label="Fail word" hint="The answer's last line for a failure; empty = FAIL" error={errors.gate_fail}>{(id, aria) => (
            <input id={id} {...aria} value={s.gate_fail} placeholder="FAIL" onChange={(e) => onChange({ gate_fail: e.target.value })} />
          )}</Field>
        </div>
      )}
      <div className="grid2">
        <Field label={s.gate ? 'On pass' : 'On success'} error={errors.on_success}>{(id, aria) => (
          <select id={id} {...aria} value={s.on_success} onChange={(e) => onChange({ on_success: e.target.value })}>
            <option value="">{i === steps.length - 1 ? 'Finish (the last step)' : 'The next step'}</option>
            {targets.map((t) => <option key={t.key} value={t.key}>{t.label}</option>)}
            <option value={END}>End: finish</option>
          </select>
        )}</Field>
        <Field label={s.gate ? 'On fail' : 'On failure'} error={errors.on_failure}>{(id, aria) => (
          <select id={id} {...aria} value={s.on_failure} onChange={(e) => onChange({ on_failure: e.target.value })}>
            <option value="">The workflow fails</option>
            {targets.map((t) => <option key={t.key} value={t.key}>{t.label}</option>)}
            <option value={END}>End: the workflow fails</option>
          </select>
        )}</Field>
      </div>
    </fieldset>
  )
}
