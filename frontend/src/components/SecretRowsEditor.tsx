import { SecretInput, secretStart, type SecretEdit } from './SecretField'
import { MASK } from '../lib/api'

/**
 * One named write-only value in the editor (an environment variable, a
 * request header). A stored one keeps its value (the mask goes back, under
 * the same name) until replaced; its name is fixed — a renamed entry is a
 * new one, so remove it and add the new name.
 */
export interface SecretRow { key: number; name: string; stored: boolean; edit: SecretEdit }

/** Per-row messages, by row key. */
export type RowErrors = Record<number, { name?: string; value?: string }>

let nextKey = 1
export const newSecretRow = (): SecretRow => ({ key: nextKey++, name: '', stored: false, edit: secretStart(false) })
export const secretRowsOf = (entries: { name: string; value: string }[]): SecretRow[] =>
  entries.map((v) => ({ key: nextKey++, name: v.name, stored: v.value === MASK, edit: secretStart(v.value === MASK) }))

/** Whether a row says anything: stored, or given a name or a value. */
export const rowUsed = (r: SecretRow) => r.stored || !!r.name.trim() || !!r.edit.value

/** A stored row's untouched value when keeping it is not allowed: shown as an empty replacement. */
export const shownEdit = (r: SecretRow, keepable: boolean): SecretEdit =>
  !keepable && r.stored && r.edit.mode === 'keep' ? { mode: 'replace', value: '' } : r.edit

interface Props {
  legend: string
  intro: string
  /** What one row is called: "Variable" → "Variable 1 name", "Add variable". */
  noun: string
  namePlaceholder: string
  rows: SecretRow[]
  errors: RowErrors
  onChange: (rows: SecretRow[]) => void
  /** Off when a stored value may not be kept (it would go somewhere new): stored rows ask for the value again. */
  keepable?: boolean
}

export function SecretRowsEditor({ legend, intro, noun, namePlaceholder, rows, errors, onChange, keepable = true }: Props) {
  const update = (key: number, patch: Partial<SecretRow>) => onChange(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)))
  const lower = noun.toLowerCase()
  return (
    <fieldset className="env-editor" aria-label={legend}>
      <legend>{legend}</legend>
      <p className="muted small">{intro}</p>
      {rows.length > 0 && (
        <div className="env-rows">
          {rows.map((r, i) => (
            <div className="env-row" key={r.key} data-env={r.name}>
              <div className="env-cell">
                <input aria-label={`${noun} ${i + 1} name`} className="mono" value={r.name} readOnly={r.stored} placeholder={namePlaceholder} spellCheck={false}
                  onChange={(e) => update(r.key, { name: e.target.value })} />
                {errors[r.key]?.name && <small className="error-text" role="alert">{errors[r.key].name}</small>}
              </div>
              <div className="env-cell">
                <SecretInput id={`secret-row-${r.key}`} edit={shownEdit(r, keepable)} stored={r.stored} existing={r.stored && keepable} clearable={false} placeholder="value"
                  label={`${noun} ${i + 1} value`} onChange={(edit) => update(r.key, { edit })} />
                {errors[r.key]?.value && <small className="error-text" role="alert">{errors[r.key].value}</small>}
              </div>
              <button type="button" className="icon-btn" aria-label={`Remove ${r.name || `${lower} ${i + 1}`}`} title="Remove" onClick={() => onChange(rows.filter((x) => x.key !== r.key))}>×</button>
            </div>
          ))}
        </div>
      )}
      <button type="button" className="btn btn-ghost btn-sm" onClick={() => onChange([...rows, newSecretRow()])}>Add {lower}</button>
    </fieldset>
  )
}
