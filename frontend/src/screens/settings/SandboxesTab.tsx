import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, ApiError, errorText, ok, type Sandbox } from '../../lib/api'
import { keys, useSandboxes } from '../../lib/queries'
import { ContainersList } from './ContainersList'
import { SandboxForm } from './SandboxForm'
import { configHeadline } from './sandboxConfig'

/** Where project trees live and commands run. Everyone reads the list; admins change it. */
export function SandboxesTab({ admin }: { admin: boolean }) {
  const sandboxes = useSandboxes()
  const [editing, setEditing] = useState<Sandbox | 'new' | null>(null)
  return (
    <div className="tab-page">
      <div className="tab-intro">
        <p className="muted">
          A sandbox is a machine projects live on: a Docker daemon and the image every project container runs, or an E2B-compatible service.
          {!admin && ' Only admins can change these.'}
        </p>
        {admin && <button className="btn btn-primary" onClick={() => setEditing('new')}>Add sandbox</button>}
      </div>
      {editing && (
        <SandboxForm key={editing === 'new' ? 'new' : `${editing.id}:${editing.revision}`} sandbox={editing === 'new' ? undefined : editing}
          onDone={() => setEditing(null)} onReload={(fresh) => setEditing(fresh)} />
      )}
      {sandboxes.isError && <p className="error-text" role="alert">{errorText(sandboxes.error)}</p>}
      {sandboxes.data?.length === 0 && !editing && <p className="empty muted">No sandboxes yet.{admin ? ' Add one to give projects a place to live.' : ''}</p>}
      <ul className="rows">
        {sandboxes.data?.map((s) => <SandboxRow key={s.id} sandbox={s} admin={admin} onEdit={() => setEditing(s)} />)}
      </ul>
    </div>
  )
}

type TestResult = { tone: 'ok' | 'error' | 'warn'; text: string }

function SandboxRow({ sandbox: s, admin, onEdit }: { sandbox: Sandbox; admin: boolean; onEdit: () => void }) {
  const qc = useQueryClient()
  const [testing, setTesting] = useState(false)
  const [test, setTest] = useState<TestResult | null>(null)
  const [containers, setContainers] = useState(false)
  const [confirming, setConfirming] = useState(false)
  const [error, setError] = useState('')
  const what = configHeadline(s.type, s.config)

  async function runTest() {
    setTesting(true)
    setTest(null)
    try {
      const r = await ok(api.POST('/api/v1/sandboxes/{id}/test', { params: { path: { id: s.id } } }))
      setTest(r.ok ? { tone: 'ok', text: `Reached; the test command ran: ${r.output.trim() || '(no output)'}` } : { tone: 'warn', text: `Reached, but the test command failed: ${r.output.trim() || '(no output)'}` })
    } catch (e) {
      const unreachable = e instanceof ApiError && e.status === 502
      setTest({ tone: 'error', text: unreachable ? `Unreachable: ${errorText(e)}` : errorText(e) })
    } finally {
      setTesting(false)
    }
  }

  async function remove() {
    setConfirming(false)
    setError('')
    try {
      await ok(api.DELETE('/api/v1/sandboxes/{id}', { params: { path: { id: s.id } } }))
      await qc.invalidateQueries({ queryKey: keys.sandboxes })
    } catch (e) {
      setError(errorText(e))
    }
  }

  return (
    <li className="row row-stack" data-sandbox={s.name}>
      <div className="row-line">
        <div className="row-main">
          <b>{s.name}</b> <span className="pill">{s.type}</span>
          {s.supports.rebuild && <span className="pill" title="The container can be replaced while the files survive">rebuild</span>}
          {s.supports.public_host && <span className="pill" title="Ports are reachable on a public host name">public host</span>}
          <div className="muted small">{what && <><code>{what}</code> · </>}{s.project_count === 1 ? '1 project' : `${s.project_count} projects`}</div>
        </div>
        {admin && (
          <>
            <button className="btn btn-ghost btn-sm" disabled={testing} onClick={runTest}>{testing ? 'Testing…' : 'Test'}</button>
            {/* Containers are what a rebuild replaces: a type that rebuilds has them to list. */}
            {s.supports.rebuild && (
              <button className="btn btn-ghost btn-sm" aria-expanded={containers} onClick={() => setContainers((o) => !o)}>Containers</button>
            )}
            <button className="btn btn-ghost btn-sm" onClick={onEdit}>Edit</button>
            {confirming ? (
              <button className="btn btn-danger btn-sm" autoFocus onBlur={() => setConfirming(false)} onClick={remove}>Delete?</button>
            ) : (
              <button className="btn btn-danger btn-sm" onClick={() => setConfirming(true)}>Delete</button>
            )}
          </>
        )}
      </div>
      {test && <p className={`result result-${test.tone}`} role="status" data-test-result={test.tone}>{test.text}</p>}
      {error && <p className="error-text" role="alert">{error}</p>}
      {containers && <ContainersList sandboxId={s.id} />}
    </li>
  )
}
