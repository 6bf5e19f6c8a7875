import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, ApiError, errorText, ok, type Sandbox } from '../../lib/api'
import { keys, useSandboxes } from '../../lib/queries'
import { ContainersList } from './ContainersList'
import { SandboxForm } from './SandboxForm'
import { SSHHostKey } from './SSHHostKey'
import { configHeadline, pinsHostKey } from './sandboxConfig'

/** Where project trees live and commands run. Everyone reads the list; admins change it. */
export function SandboxesTab({ admin }: { admin: boolean }) {
  const sandboxes = useSandboxes()
  const [editing, setEditing] = useState<Sandbox | 'new' | null>(null)
  return (
    <div className="tab-page">
      <div className="tab-intro">
        <p className="muted">
          A sandbox is a machine projects live on: a Docker daemon (this machine’s, or a remote one over SSH or TCP) and the image every project container runs,
          or an E2B-compatible service (E2B’s cloud, a self-hosted E2B) where each project is its own cloud sandbox.
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
    // A first connection over SSH pins the host key, even one that then
    // finds no daemon: show what it pinned.
    if (pinsHostKey(s.type, s.config)) await qc.invalidateQueries({ queryKey: keys.sandboxes })
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
          {!s.supports.runs && <span className="pill pill-warn" title="The config is stored, but this server cannot run this type yet: Test, projects and terminals refuse it">not available yet</span>}
          <div className="muted small">{what && <><code>{what}</code> · </>}{s.project_count === 1 ? '1 project' : `${s.project_count} projects`}</div>
        </div>
        {admin && (
          <>
            {/* Only a type this server runs has anything to test or list. */}
            {s.supports.runs && <button className="btn btn-ghost btn-sm" disabled={testing} onClick={runTest}>{testing ? 'Testing…' : 'Test'}</button>}
            {/* Containers are what a rebuild replaces: a type that rebuilds has them to list. */}
            {s.supports.runs && s.supports.rebuild && (
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
      {(s.ssh_host_key || pinsHostKey(s.type, s.config)) && <SSHHostKey sandbox={s} admin={admin} />}
      {test && <p className={`result result-${test.tone}`} role="status" data-test-result={test.tone}>{test.text}</p>}
      {error && <p className="error-text" role="alert">{error}</p>}
      {containers && <ContainersList sandboxId={s.id} />}
    </li>
  )
}
