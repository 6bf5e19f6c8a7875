import { useQueryClient } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { Field } from '../../components/Field'
import { secretStart, type SecretEdit } from '../../components/SecretField'
import type { RowErrors, SecretRow } from '../../components/SecretRowsEditor'
import { api, ApiError, errorText, ok, type Sandbox } from '../../lib/api'
import { keys, useSandboxTypes } from '../../lib/queries'
import { movedRevision } from '../../lib/useSave'
import {
  buildConfig, configFor, configKeys, frozenNotice, SANDBOX_TYPES, SandboxConfigFields, secretKeys, secretMapsFor, splitConfigErrors, storedSecrets, type SandboxType,
} from './sandboxConfig'

const secretsFor = (type: SandboxType, existing: boolean) => Object.fromEntries(secretKeys(type).map((k) => [k, secretStart(existing)]))

/**
 * Create or edit a sandbox. PUT replaces it whole and carries the revision
 * the form was loaded at, so a concurrent edit is a 409 to reload rather
 * than a silent overwrite.
 */
export function SandboxForm({ sandbox, onDone, onReload }: { sandbox?: Sandbox; onDone: () => void; onReload: (fresh: Sandbox) => void }) {
  const qc = useQueryClient()
  const types = useSandboxTypes()
  // A type this server cannot run yet is not offered as if it worked; a
  // row already of that type keeps it, to stay editable.
  const runs = (t: SandboxType) => types.data?.find((x) => x.type === t)?.supports.runs
  const [name, setName] = useState(sandbox?.name ?? '')
  const [type, setType] = useState<SandboxType>(sandbox?.type ?? 'docker')
  const [prompt, setPrompt] = useState(sandbox?.prompt ?? '')
  const [config, setConfig] = useState(() => configFor(type, sandbox?.config))
  const [secrets, setSecrets] = useState<Record<string, SecretEdit>>(() => secretsFor(type, !!sandbox))
  const [maps, setMaps] = useState<Record<string, SecretRow[]>>(() => secretMapsFor(type, sandbox?.config))
  const stored = storedSecrets(sandbox?.type === type ? sandbox?.config : undefined)
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [rowErrors, setRowErrors] = useState<Record<string, RowErrors>>({})
  const [error, setError] = useState('')
  const [stale, setStale] = useState<Sandbox | null>(null)
  const [saving, setSaving] = useState(false)

  function changeType(t: SandboxType) {
    setType(t)
    setConfig(configFor(t, sandbox?.type === t ? sandbox.config : undefined))
    setSecrets(secretsFor(t, !!sandbox && sandbox.type === t))
    setMaps(secretMapsFor(t, sandbox?.type === t ? sandbox.config : undefined))
    setErrors({})
    setRowErrors({})
  }

  async function save(e: FormEvent) {
    e.preventDefault()
    setError('')
    setErrors({})
    setStale(null)
    const built = buildConfig(type, config, secrets, maps)
    setRowErrors(built.rowErrors)
    if (Object.keys(built.rowErrors).length) {
      setError('Some values need your attention.')
      return
    }
    setSaving(true)
    const body = { name, type, prompt, config: built.config }
    try {
      if (sandbox) await ok(api.PUT('/api/v1/sandboxes/{id}', { params: { path: { id: sandbox.id } }, body: { ...body, revision: sandbox.revision } }))
      else await ok(api.POST('/api/v1/sandboxes', { body }))
      await qc.invalidateQueries({ queryKey: keys.sandboxes })
      onDone()
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && sandbox) {
        // A moved revision means someone else saved; otherwise the projects
        // on it froze what this edit changes (the server says which).
        const fresh = await movedRevision(() => ok(api.GET('/api/v1/sandboxes/{id}', { params: { path: { id: sandbox.id } } })), sandbox.revision)
        if (fresh) setStale(fresh)
        else setError(errorText(err))
      } else {
        const { rows, rest } = splitConfigErrors(err instanceof ApiError ? err.fields : {}, built.rowOf)
        setErrors(rest)
        setRowErrors(rows)
        setError(errorText(err))
      }
    } finally {
      setSaving(false)
    }
  }

  const known = new Set(['name', 'type', 'prompt', ...configKeys(type).map((k) => `config.${k}`)])
  const stray = Object.entries(errors).filter(([k]) => !known.has(k))
  return (
    <form className="card form" onSubmit={save} aria-label={sandbox ? `Edit ${sandbox.name}` : 'New sandbox'}>
      <h2>{sandbox ? `Edit ${sandbox.name}` : 'New sandbox'}</h2>
      {sandbox && sandbox.project_count > 0 && (
        <p className="muted small">
          {sandbox.project_count === 1 ? 'A project lives' : `${sandbox.project_count} projects live`} here: {frozenNotice(sandbox.type)}
        </p>
      )}
      <div className="grid2">
        <Field label="Name" error={errors.name}>{(id) => <input id={id} value={name} onChange={(e) => setName(e.target.value)} required />}</Field>
        <Field label="Type" error={errors.type} hint={runs(type) === false ? 'This server cannot run this type yet: the config is stored, but Test, projects and terminals refuse it' : undefined}>{(id) => (
          <select id={id} value={type} onChange={(e) => changeType(e.target.value as SandboxType)}>
            {SANDBOX_TYPES.map((t) => (
              <option key={t} value={t} disabled={!runs(t) && t !== sandbox?.type}>{runs(t) === false ? `${t} — not available yet` : t}</option>
            ))}
          </select>
        )}</Field>
      </div>
      <SandboxConfigFields type={type} config={config} secrets={secrets} stored={stored} existing={!!sandbox && sandbox.type === type} errors={errors}
        maps={maps} rowErrors={rowErrors} onConfig={(k, v) => setConfig((c) => ({ ...c, [k]: v }))} onSecret={(k, v) => setSecrets((s) => ({ ...s, [k]: v }))}
        onMap={(k, rows) => setMaps((m) => ({ ...m, [k]: rows }))} />
      <Field label="Prompt" hint="Describes the machine to agents working here (toolchain, network, package manager); added after their instructions" error={errors.prompt}>{(id) => (
        <textarea id={id} rows={3} value={prompt} onChange={(e) => setPrompt(e.target.value)} />
      )}</Field>
      {errors.config && <p className="error-text">{errors.config}</p>}
      {stray.filter(([k]) => k !== 'config').map(([k, v]) => <p key={k} className="error-text">{k}: {v}</p>)}
      {error && <p className="error-text" role="alert">{error}</p>}
      {stale && (
        <div className="callout callout-warn" role="alert">
          <p>This sandbox was changed elsewhere while you edited it (now revision {stale.revision}). Reload it and apply your change again.</p>
          <span><button type="button" className="btn btn-sm" onClick={() => onReload(stale)}>Reload</button></span>
        </div>
      )}
      <div className="form-actions">
        <button className="btn btn-primary" disabled={saving}>{saving ? 'Saving…' : 'Save'}</button>
        <button type="button" className="btn btn-ghost" onClick={onDone}>Cancel</button>
      </div>
    </form>
  )
}
