import { SecretInput, secretStart, type SecretEdit } from '../../components/SecretField'
import { MASK, type EnvVar } from '../../lib/api'

/**
 * One environment variable in the editor. A stored one keeps its value (the
 * mask goes back, under the same name) until replaced; its name is fixed —
 * a renamed variable is a new one, so remove it and add the new name.
 */
export interface EnvRow { key: number; name: string; stored: boolean; edit: SecretEdit }

let nextKey = 1
export const newEnvRow = (): EnvRow => ({ key: nextKey++, name: '', stored: false, edit: secretStart(false) })
export const envRowsOf = (env: EnvVar[] | null | undefined): EnvRow[] =>
  (env ?? []).map((v) => ({ key: nextKey++, name: v.name, stored: v.value === MASK, edit: secretStart(v.value === MASK) }))

/** The env to send, and which row each entry came from (400s are keyed env[i].name / env[i].value by the sent index). */
export function envBody(rows: EnvRow[]): { env: EnvVar[]; rowOf: number[] } {
  const sent = rows.filter((r) => r.stored || r.name.trim() || r.edit.value)
  return {
    env: sent.map((r) => ({ name: r.name.trim(), value: r.stored && r.edit.mode === 'keep' ? MASK : r.edit.value })),
    rowOf: sent.map((r) => r.key),
  }
}

export function EnvEditor({ rows, errors, onChange }: { rows: EnvRow[]; errors: Record<number, { name?: string; value?: string }>; onChange: (rows: EnvRow[]) => void }) {
  const update = (key: number, patch: Partial<EnvRow>) => onChange(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)))
  return (
    <fieldset className="env-editor" aria-label="Environment">
      <legend>Environment</legend>
      <p className="muted small">Variables every command, shell and terminal in the project’s container sees. Values are write-only: stored sealed and never shown again.</p>
      {rows.length > 0 && (
        <div className="env-rows">
          {rows.map((r, i) => (
            <div className="env-row" key={r.key} data-env={r.name}>
              <div className="env-cell">
                <input aria-label={`Variable ${i + 1} name`} className="mono" value={r.name} readOnly={r.stored} placeholder="NAME" spellCheck={false}
                  onChange={(e) => update(r.key, { name: e.target.value })} />
                {errors[r.key]?.name && <small className="error-text" role="alert">{errors[r.key].name}</small>}
              </div>
              <div className="env-cell">
                <SecretInput id={`env-${r.key}`} edit={r.edit} stored={r.stored} existing={r.stored} clearable={false} placeholder="value"
                  label={`Variable ${i + 1} value`} onChange={(edit) => update(r.key, { edit })} />
                {errors[r.key]?.value && <small className="error-text" role="alert">{errors[r.key].value}</small>}
              </div>
              <button type="button" className="icon-btn" aria-label={`Remove ${r.name || `variable ${i + 1}`}`} title="Remove" onClick={() => onChange(rows.filter((x) => x.key !== r.key))}>×</button>
            </div>
          ))}
        </div>
      )}
      <button type="button" className="btn btn-ghost btn-sm" onClick={() => onChange([...rows, newEnvRow()])}>Add variable</button>
    </fieldset>
  )
}
