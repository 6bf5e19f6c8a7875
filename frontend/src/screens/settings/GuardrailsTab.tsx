import { useQuery } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { useSave } from '../../lib/useSave'
import { Field } from '../../components/Field'
import { api, ok, type Schemas } from '../../lib/api'

type Guardrail = Schemas['GuardrailView']
type Stage = Guardrail['stages'][number]
const STAGES: Stage[] = ['input', 'output', 'tool_input', 'tool_output']
const KEY = ['guardrails']

/** Regex and length checks at the input, output and tool stages; agents name them. */
export function GuardrailsTab({ admin }: { admin: boolean }) {
  const list = useQuery({ queryKey: KEY, queryFn: () => ok(api.GET('/api/v1/guardrails')) })
  const [editing, setEditing] = useState<Guardrail | 'new' | null>(null)
  return (
    <div className="tab-page">
      <div className="tab-intro">
        <p className="muted">Guardrails inspect what passes a stage and stop the run when they trip.{!admin && ' Admins edit them.'}</p>
        {admin && <button className="btn btn-primary" onClick={() => setEditing('new')}>Add guardrail</button>}
      </div>
      {editing && <GuardrailForm key={editing === 'new' ? 'new' : editing.id} guardrail={editing === 'new' ? undefined : editing} onDone={() => setEditing(null)} />}
      <ul className="rows">
        {list.data?.map((g) => (
          <li key={g.id} className="row">
            <div className="row-main">
              <b>{g.name}</b> <span className="pill">{g.mode}</span> {g.builtin && <span className="pill">built in</span>} {g.blocking && <span className="pill">blocking</span>}
              <div className="muted small">{g.stages.join(', ')}{g.description ? ` · ${g.description}` : ''}</div>
            </div>
            {admin && !g.builtin && <button className="btn btn-ghost btn-sm" onClick={() => setEditing(g)}>Edit</button>}
          </li>
        ))}
      </ul>
    </div>
  )
}

function GuardrailForm({ guardrail, onDone }: { guardrail?: Guardrail; onDone: () => void }) {
  const { save: act, errors, error } = useSave(KEY, onDone)
  const [g, setG] = useState({
    name: guardrail?.name ?? '', description: guardrail?.description ?? '', mode: guardrail?.mode ?? ('regex' as Guardrail['mode']),
    pattern: guardrail?.pattern ?? '', max_chars: guardrail?.max_chars ?? 0, stages: guardrail?.stages ?? (['input'] as Stage[]), blocking: guardrail?.blocking ?? false,
  })

  function save(e: FormEvent) {
    e.preventDefault()
    void act(() => (guardrail ? ok(api.PUT('/api/v1/guardrails/{id}', { params: { path: { id: guardrail.id } }, body: g })) : ok(api.POST('/api/v1/guardrails', { body: g }))))
  }

  return (
    <form className="card form" onSubmit={save} aria-label={guardrail ? `Edit ${guardrail.name}` : 'New guardrail'}>
      <div className="grid2">
        <Field label="Name" error={errors.name}>{(id) => <input id={id} value={g.name} onChange={(e) => setG({ ...g, name: e.target.value })} required />}</Field>
        <Field label="Mode" error={errors.mode}>{(id) => (
          <select id={id} value={g.mode} onChange={(e) => setG({ ...g, mode: e.target.value as Guardrail['mode'] })}>
            <option value="regex">regex</option>
            <option value="max_length">max_length</option>
          </select>
        )}</Field>
        {g.mode === 'regex' ? (
          <Field label="Pattern" error={errors.pattern}>{(id) => <input id={id} className="mono" value={g.pattern} onChange={(e) => setG({ ...g, pattern: e.target.value })} />}</Field>
        ) : (
          <Field label="Max characters" error={errors.max_chars}>{(id) => <input id={id} type="number" value={g.max_chars} onChange={(e) => setG({ ...g, max_chars: Number(e.target.value) || 0 })} />}</Field>
        )}
        <Field label="Description" error={errors.description}>{(id) => <input id={id} value={g.description} onChange={(e) => setG({ ...g, description: e.target.value })} />}</Field>
      </div>
      <Field label="Stages" error={errors.stages}>{() => (
        <div className="checks">
          {STAGES.map((s) => (
            <label key={s} className="check">
              <input type="checkbox" checked={g.stages.includes(s)} onChange={(e) => setG({ ...g, stages: e.target.checked ? [...g.stages, s] : g.stages.filter((x) => x !== s) })} /> {s}
            </label>
          ))}
        </div>
      )}</Field>
      <Field label="Blocking (input stage: check before the first model call)" inline error={errors.blocking}>{(id) => (
        <input id={id} type="checkbox" checked={g.blocking} onChange={(e) => setG({ ...g, blocking: e.target.checked })} />
      )}</Field>
      {error && <p className="error-text" role="alert">{error}</p>}
      <div className="form-actions">
        <button className="btn btn-primary">Save</button>
        <button type="button" className="btn btn-ghost" onClick={onDone}>Cancel</button>
        <span className="grow" />
        {guardrail && <button type="button" className="btn btn-danger" onClick={() => act(() => ok(api.DELETE('/api/v1/guardrails/{id}', { params: { path: { id: guardrail.id } } })))}>Delete</button>}
      </div>
    </form>
  )
}
