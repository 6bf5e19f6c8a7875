import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Icon } from '../../components/Icon'
import { api, errorText, ok, type Project, type Sandbox } from '../../lib/api'
import { downloadFile } from '../../lib/download'
import { keys, useMe, useProjects, useSandboxes } from '../../lib/queries'
import { openTerminal } from '../terminal/terminalTarget'
import { ProjectForm } from './ProjectForm'
import { SandboxState } from './SandboxState'

/** The caller's working trees (admins may look at every owner's), each on one sandbox. */
export function ProjectsTab() {
  const me = useMe()
  const admin = me.data?.role === 'admin'
  const [all, setAll] = useState(false)
  const projects = useProjects(admin && all)
  const sandboxes = useSandboxes()
  const users = useQuery({ queryKey: ['users'], enabled: admin && all, queryFn: () => ok(api.GET('/api/v1/auth/users')) })
  const [editing, setEditing] = useState<string | 'new' | null>(null)
  const [warning, setWarning] = useState('')
  const sandboxOf = (id: string) => sandboxes.data?.find((s) => s.id === id)
  const ownerName = (id: string) => users.data?.find((u) => u.id === id)?.username ?? id

  return (
    <div className="tab-page">
      <div className="tab-intro">
        <p className="muted">A project is your working tree on a sandbox. A conversation bound to it gets file and command tools there, and you get a terminal.</p>
        <button className="btn btn-primary" onClick={() => setEditing('new')}>New project</button>
      </div>
      {admin && (
        <label className="toggle">
          <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} /> All owners
        </label>
      )}
      {editing && <ProjectForm key={editing} projectId={editing === 'new' ? undefined : editing} onDone={() => setEditing(null)} />}
      {warning && (
        <div className="callout callout-warn" role="alert">
          <p>{warning}</p>
          <span><button className="btn btn-sm btn-ghost" onClick={() => setWarning('')}>Dismiss</button></span>
        </div>
      )}
      {projects.isError && <p className="error-text" role="alert">{errorText(projects.error)}</p>}
      {projects.data?.length === 0 && !editing && <p className="empty muted">{all ? 'No projects on this server.' : 'No projects yet.'}</p>}
      <ul className="rows">
        {projects.data?.map((p) => (
          <ProjectRow key={p.id} project={p} sandbox={sandboxOf(p.sandbox_id)} own={p.owner_id === me.data?.id} admin={admin}
            owner={all ? ownerName(p.owner_id) : undefined} onEdit={() => setEditing(p.id)} onWarning={setWarning} />
        ))}
      </ul>
    </div>
  )
}

interface RowProps {
  project: Project
  sandbox?: Sandbox
  own: boolean
  admin: boolean
  owner?: string
  onEdit: () => void
  onWarning: (w: string) => void
}

function ProjectRow({ project: p, sandbox, own, admin, owner, onEdit, onWarning }: RowProps) {
  const qc = useQueryClient()
  const [confirming, setConfirming] = useState(false)
  const [downloading, setDownloading] = useState(false)
  const [error, setError] = useState('')

  async function remove() {
    setConfirming(false)
    setError('')
    try {
      const r = await ok(api.DELETE('/api/v1/projects/{id}', { params: { path: { id: p.id } } }))
      if (r.storage_error) onWarning(`“${p.name}” was deleted, but its storage could not be reclaimed and is left for the operator: ${r.storage_error}`)
      await qc.invalidateQueries({ queryKey: keys.projects })
    } catch (e) {
      setError(errorText(e))
    }
  }

  async function download() {
    setDownloading(true)
    setError('')
    try {
      await downloadFile(`/api/v1/projects/${encodeURIComponent(p.id)}/export`, `${p.name}.tar`)
    } catch (e) {
      setError(errorText(e))
    } finally {
      setDownloading(false)
    }
  }

  return (
    <li className="row row-stack" data-project={p.name}>
      <div className="row-line">
        <Icon name="folder" size={18} />
        <div className="row-main">
          <b>{p.name}</b> <span className="pill" title="Its sandbox">{sandbox?.name ?? 'unknown sandbox'}</span>
          {owner !== undefined && <span className="pill" title="Owner">{owner}</span>}
          <div className="muted small">
            {p.session_count === 1 ? '1 conversation' : `${p.session_count} conversations`} bound
            {p.storage_hint && <> · <code title="Where its files live">{p.storage_hint}</code></>}
          </div>
        </div>
        {(own || admin) && (
          <button className="btn btn-ghost btn-sm" onClick={() => openTerminal({ projectId: p.id, name: p.name })}>
            <Icon name="terminal" size={14} /> Terminal
          </button>
        )}
        {own && (
          <button className="btn btn-ghost btn-sm" disabled={downloading} onClick={download} title="The project’s /workspace as a tar">
            <Icon name="download" size={14} /> {downloading ? 'Downloading…' : 'Download files'}
          </button>
        )}
        {own && <button className="btn btn-ghost btn-sm" onClick={onEdit}>Edit</button>}
        {confirming ? (
          <button className="btn btn-danger btn-sm" autoFocus onBlur={() => setConfirming(false)} onClick={remove}>Delete with its files?</button>
        ) : (
          <button className="btn btn-danger btn-sm" onClick={() => setConfirming(true)}>Delete</button>
        )}
      </div>
      <SandboxState project={p} sandbox={sandbox} own={own} />
      {error && <p className="error-text" role="alert">{error}</p>}
    </li>
  )
}
