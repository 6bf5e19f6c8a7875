import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { Field } from '../../components/Field'
import { api, ApiError, errorText, ok, type Project, type Sandbox } from '../../lib/api'
import { keys, useSandboxes } from '../../lib/queries'
import { movedRevision } from '../../lib/useSave'
import { EnvEditor, envBody, envRowsOf, type EnvRow } from './EnvEditor'

/** A new project, or an existing one loaded whole (GET /projects/:id is the one read that carries its environment). */
export function ProjectForm({ projectId, onDone }: { projectId?: string; onDone: () => void }) {
  const [reloads, setReloads] = useState(0)
  const project = useQuery({
    queryKey: ['project', projectId, reloads], enabled: !!projectId, gcTime: 0, retry: false,
    queryFn: () => ok(api.GET('/api/v1/projects/{id}', { params: { path: { id: projectId! } } })),
  })
  if (!projectId) return <ProjectFields onDone={onDone} onReload={() => {}} />
  if (project.isError) return <div className="card form"><p className="error-text" role="alert">{errorText(project.error)}</p><span><button className="btn btn-ghost" onClick={onDone}>Back</button></span></div>
  if (!project.data) return <div className="card form muted">Loading the project…</div>
  return <ProjectFields key={`${project.data.id}:${project.data.revision}`} project={project.data} onDone={onDone} onReload={() => setReloads((n) => n + 1)} />
}

function ProjectFields({ project, onDone, onReload }: { project?: Project; onDone: () => void; onReload: () => void }) {
  const qc = useQueryClient()
  const sandboxes = useSandboxes()
  const [name, setName] = useState(project?.name ?? '')
  const [sandboxId, setSandboxId] = useState(project?.sandbox_id ?? '')
  const [rows, setRows] = useState<EnvRow[]>(() => envRowsOf(project?.env))
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [envErrors, setEnvErrors] = useState<Record<number, { name?: string; value?: string }>>({})
  const [error, setError] = useState('')
  const [stale, setStale] = useState(false)
  const [saving, setSaving] = useState(false)
  const list = sandboxes.data ?? []
  // A sandbox whose type this server cannot run yet is shown, not offered
  // (unless the project already lives there).
  const offered = (s: Sandbox) => s.supports.runs || s.id === project?.sandbox_id
  const chosen = sandboxId || list.find(offered)?.id || ''

  async function save(e: FormEvent) {
    e.preventDefault()
    setError('')
    setErrors({})
    setEnvErrors({})
    setStale(false)
    setSaving(true)
    const { env, rowOf } = envBody(rows)
    const body = { name, sandbox_id: chosen, env }
    try {
      if (project) await ok(api.PUT('/api/v1/projects/{id}', { params: { path: { id: project.id } }, body: { ...body, revision: project.revision } }))
      else await ok(api.POST('/api/v1/projects', { body }))
      await qc.invalidateQueries({ queryKey: keys.projects })
      onDone()
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && project) {
        // A moved revision: someone saved meanwhile. Otherwise the move is
        // refused (the files stay at their sandbox's destination).
        if (await movedRevision(() => ok(api.GET('/api/v1/projects/{id}', { params: { path: { id: project.id } } })), project.revision)) setStale(true)
        else setError(errorText(err))
      } else {
        const fields = err instanceof ApiError ? err.fields : {}
        const byRow: Record<number, { name?: string; value?: string }> = {}
        const rest: Record<string, string> = {}
        for (const [k, v] of Object.entries(fields)) {
          const m = /^env\[(\d+)\]\.(name|value)$/.exec(k)
          if (m && rowOf[Number(m[1])] !== undefined) byRow[rowOf[Number(m[1])]] = { ...byRow[rowOf[Number(m[1])]], [m[2]]: v }
          else rest[k] = v
        }
        setErrors(rest)
        setEnvErrors(byRow)
        setError(errorText(err))
      }
    } finally {
      setSaving(false)
    }
  }

  const stray = Object.entries(errors).filter(([k]) => k !== 'name' && k !== 'sandbox_id')
  return (
    <form className="card form" onSubmit={save} aria-label={project ? `Edit ${project.name}` : 'New project'}>
      <h2>{project ? `Edit ${project.name}` : 'New project'}</h2>
      <div className="grid2">
        <Field label="Name" error={errors.name}>{(id) => <input id={id} value={name} onChange={(e) => setName(e.target.value)} required />}</Field>
        <Field label="Sandbox" hint={project ? 'Moves only to a sandbox at the same place: the files do not travel' : 'Where its files live and its commands run'} error={errors.sandbox_id}>{(id) => (
          <select id={id} value={chosen} onChange={(e) => setSandboxId(e.target.value)} required>
            {!list.length && <option value="">No sandboxes yet</option>}
            {list.map((s) => (
              <option key={s.id} value={s.id} disabled={!offered(s)}>{s.name} ({s.type}{s.supports.runs ? '' : ' — not available yet'})</option>
            ))}
          </select>
        )}</Field>
      </div>
      {sandboxes.isSuccess && !list.length && <p className="muted small">An admin adds sandboxes in Settings → Sandboxes.</p>}
      <EnvEditor rows={rows} errors={envErrors} onChange={setRows} />
      {project && <p className="muted small">Changing the environment replaces the container at its next use and closes open terminals; files under /workspace stay.</p>}
      {stray.map(([k, v]) => <p key={k} className="error-text">{k}: {v}</p>)}
      {error && <p className="error-text" role="alert">{error}</p>}
      {stale && (
        <div className="callout callout-warn" role="alert">
          <p>This project was changed elsewhere while you edited it. Reload it and apply your change again.</p>
          <span><button type="button" className="btn btn-sm" onClick={onReload}>Reload</button></span>
        </div>
      )}
      <div className="form-actions">
        <button className="btn btn-primary" disabled={saving}>{saving ? 'Saving…' : 'Save'}</button>
        <button type="button" className="btn btn-ghost" onClick={onDone}>Cancel</button>
      </div>
    </form>
  )
}
