import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useMemo, useState } from 'react'
import { api, errorText, ok, type Schemas } from '../../lib/api'

type Def = Schemas['SettingDefView']
type Setting = Schemas['SettingView']
const KEY = ['settings']

/** The server-wide settings, drawn entirely from GET /setting-defs; admins write them. */
export function GlobalSettingsTab({ admin }: { admin: boolean }) {
  const defs = useQuery({ queryKey: ['setting-defs'], queryFn: () => ok(api.GET('/api/v1/setting-defs')) })
  const values = useQuery({ queryKey: KEY, queryFn: () => ok(api.GET('/api/v1/settings')) })
  const groups = useMemo(() => {
    const m = new Map<string, Def[]>()
    for (const d of defs.data ?? []) m.set(d.group, [...(m.get(d.group) ?? []), d])
    return [...m]
  }, [defs.data])
  const byKey = new Map((values.data ?? []).map((v) => [v.key, v]))
  const unknown = (values.data ?? []).filter((v) => v.unknown)

  if (defs.isError) return <p className="error-text">{errorText(defs.error)}</p>
  return (
    <div className="tab-page">
      <p className="muted">Server-wide settings. {admin ? 'An empty value returns a setting to its default.' : 'Only admins can change these.'}</p>
      {groups.map(([group, list]) => (
        <fieldset key={group} className="card group">
          <legend>{group}</legend>
          {list.map((d) => <SettingRow key={`${d.key}:${byKey.get(d.key)?.value ?? ''}`} def={d} value={byKey.get(d.key)} admin={admin} />)}
        </fieldset>
      ))}
      {unknown.length > 0 && (
        <fieldset className="card group">
          <legend>Left by an older version</legend>
          {unknown.map((v) => <UnknownRow key={v.key} setting={v} admin={admin} />)}
        </fieldset>
      )}
    </div>
  )
}

function SettingRow({ def, value, admin }: { def: Def; value?: Setting; admin: boolean }) {
  const qc = useQueryClient()
  const current = value?.set ? value.value : ''
  const [text, setText] = useState(current)
  const [error, setError] = useState('')
  const dirty = text !== current

  async function save(v: string) {
    setError('')
    try {
      await ok(api.PUT('/api/v1/settings/{key}', { params: { path: { key: def.key } }, body: { value: v } }))
      await qc.invalidateQueries({ queryKey: KEY })
    } catch (e) {
      setError(errorText(e))
    }
  }

  const id = `setting-${def.key}`
  const bounds = [def.min != null && `min ${def.min}`, def.max != null && `max ${def.max}`].filter(Boolean).join(', ')
  return (
    <div className="setting-row">
      <div className="setting-text">
        <label htmlFor={id}><b>{def.label}</b> <code className="muted small">{def.key}</code></label>
        <div className="muted small">{def.description} Default: {def.default === '' ? '(empty)' : def.secret ? '—' : def.default}{bounds && ` (${bounds})`}</div>
        {error && <div className="error-text small" role="alert">{error}</div>}
      </div>
      <div className="setting-input">
        {def.kind === 'bool' ? (
          <select id={id} value={text} disabled={!admin} onChange={(e) => setText(e.target.value)}>
            <option value="">default ({def.default})</option>
            <option value="true">on</option>
            <option value="false">off</option>
          </select>
        ) : def.kind === 'text' ? (
          <textarea id={id} rows={3} value={text} disabled={!admin} placeholder={def.default} onChange={(e) => setText(e.target.value)} />
        ) : (
          <input id={id} type={def.kind === 'int' ? 'number' : def.secret ? 'password' : 'text'} value={text} disabled={!admin}
            placeholder={def.default} min={def.min ?? undefined} max={def.max ?? undefined} onChange={(e) => setText(e.target.value)} />
        )}
        {admin && (
          <span className="inline">
            <button className="btn btn-sm btn-primary" disabled={!dirty} onClick={() => save(text)}>Save</button>
            {value?.set && <button className="btn btn-sm btn-ghost" onClick={() => save('')}>Reset</button>}
          </span>
        )}
      </div>
    </div>
  )
}

function UnknownRow({ setting, admin }: { setting: Setting; admin: boolean }) {
  const qc = useQueryClient()
  return (
    <div className="setting-row">
      <div className="setting-text"><code>{setting.key}</code> = {setting.value}</div>
      {admin && (
        <button className="btn btn-sm btn-danger" onClick={() => ok(api.DELETE('/api/v1/settings/{key}', { params: { path: { key: setting.key } } })).then(() => qc.invalidateQueries({ queryKey: KEY }))}>
          Delete
        </button>
      )}
    </div>
  )
}
