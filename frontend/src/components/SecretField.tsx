import { MASK } from '../lib/api'

/**
 * A write-only value being edited: keep what is stored (the mask goes back),
 * replace it, or clear it — the same three choices as a provider's key.
 */
export interface SecretEdit { mode: 'keep' | 'replace' | 'clear'; value: string }

/** Edits start at keep for a stored object, at an empty replacement for a new one. */
export const secretStart = (existing: boolean): SecretEdit => (existing ? { mode: 'keep', value: '' } : { mode: 'replace', value: '' })

/** What to send: the mask keeps, "" clears, anything else replaces. */
export function secretValue(e: SecretEdit): string {
  return e.mode === 'keep' ? MASK : e.mode === 'clear' ? '' : e.value
}

/** The control for one secret; `stored` says whether a value is stored now (the read came back masked). */
export function SecretInput({ id, edit, stored, existing, onChange, multiline, placeholder, clearable = true, label }: {
  id: string
  edit: SecretEdit
  stored: boolean
  existing: boolean
  onChange: (e: SecretEdit) => void
  multiline?: boolean
  placeholder?: string
  /** Offer "Clear" (send ""); off where removing the whole entry is the way to clear. */
  clearable?: boolean
  /** The accessible name, when no <label> points at the input. */
  label?: string
}) {
  if (edit.mode === 'replace') {
    return (
      <span className={multiline ? 'secret secret-multi' : 'inline secret'}>
        {multiline ? (
          <textarea id={id} aria-label={label} className="mono" rows={4} autoComplete="off" spellCheck={false} value={edit.value} placeholder={placeholder}
            onChange={(e) => onChange({ mode: 'replace', value: e.target.value })} />
        ) : (
          <input id={id} aria-label={label} type="password" autoComplete="off" value={edit.value} placeholder={placeholder}
            onChange={(e) => onChange({ mode: 'replace', value: e.target.value })} />
        )}
        {existing && <button type="button" className="btn btn-ghost btn-sm" onClick={() => onChange({ mode: 'keep', value: '' })}>Keep stored</button>}
      </span>
    )
  }
  return (
    <span className="inline secret">
      <input id={id} aria-label={label} value={edit.mode === 'clear' ? '(will be cleared)' : stored ? MASK : ''} placeholder={stored ? undefined : 'not set'} readOnly />
      <button type="button" className="btn btn-ghost btn-sm" onClick={() => onChange({ mode: 'replace', value: '' })}>Replace</button>
      {clearable && stored && edit.mode !== 'clear' && <button type="button" className="btn btn-ghost btn-sm" onClick={() => onChange({ mode: 'clear', value: '' })}>Clear</button>}
    </span>
  )
}
