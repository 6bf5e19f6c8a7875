import { useId, useState, type ReactNode } from 'react'
import { parseJson } from '../lib/jsonText'

/**
 * What a field's control spreads onto itself so that assistive technology
 * reads the field's hint or message with it, and knows when it is refused.
 */
export interface FieldAria {
  'aria-describedby'?: string
  'aria-invalid'?: true
  /** Only for a group field: its container is named by the field's label. */
  'aria-labelledby'?: string
}

interface FieldProps {
  label: string
  hint?: ReactNode
  error?: string
  inline?: boolean
  /**
   * The control is a group of controls (radios, checkboxes): the label is
   * text naming the group (spread aria on it), not a <label> of one input.
   */
  group?: boolean
  children: (id: string, aria: FieldAria) => ReactNode
}

/** A labelled control with its hint and its validation message, both tied to the control. */
export function Field({ label, hint, error, children, inline, group }: FieldProps) {
  const id = useId()
  const labelId = `${id}-label`
  const describedBy = error ? `${id}-error` : hint ? `${id}-hint` : undefined
  const aria: FieldAria = { 'aria-describedby': describedBy, ...(error ? { 'aria-invalid': true } : {}), ...(group ? { 'aria-labelledby': labelId } : {}) }
  return (
    <div className={`field${inline ? ' field-inline' : ''}${error ? ' has-error' : ''}`} data-field={label}>
      {group ? <span className="field-label" id={labelId}>{label}</span> : <label htmlFor={id} id={labelId}>{label}</label>}
      {children(id, aria)}
      {hint && !error && <small className="hint" id={`${id}-hint`}>{hint}</small>}
      {error && <small className="error-text" id={`${id}-error`} role="alert">{error}</small>}
    </div>
  )
}

/**
 * JSON text edited as text; the value changes only when the text parses.
 * A text that does not parse says why and where, next to it, as it is
 * typed, and marks the textarea (data-parse-error) so that a form can
 * refuse to send a value the person has not finished.
 */
export function JsonField({ id, value, onChange, rows = 4, aria }: { id: string; value: unknown; onChange: (v: unknown) => void; rows?: number; aria?: FieldAria }) {
  const [text, setText] = useState(() => JSON.stringify(value ?? null, null, 2))
  const [bad, setBad] = useState('')
  const parseId = `${id}-parse`
  const describedBy = [bad ? parseId : '', aria?.['aria-describedby'] ?? ''].filter(Boolean).join(' ') || undefined
  return (
    <>
      <textarea id={id} className={`mono${bad ? ' invalid' : ''}`} rows={rows} value={text} spellCheck={false}
        aria-describedby={describedBy} aria-invalid={bad || aria?.['aria-invalid'] ? true : undefined} data-parse-error={bad || undefined}
        onChange={(e) => {
          setText(e.target.value)
          const r = parseJson(e.target.value)
          setBad(r.ok ? '' : r.error)
          if (r.ok) onChange(r.value)
        }} />
      {bad && <small className="error-text" id={parseId}>Not valid JSON: {bad}</small>}
    </>
  )
}

/** A list of names edited as comma-separated text. */
export function ListField({ id, value, onChange, placeholder, aria }: { id: string; value: string[]; onChange: (v: string[]) => void; placeholder?: string; aria?: FieldAria }) {
  const [text, setText] = useState(value.join(', '))
  return (
    <input id={id} value={text} placeholder={placeholder} {...aria}
      onChange={(e) => {
        setText(e.target.value)
        onChange(e.target.value.split(',').map((s) => s.trim()).filter(Boolean))
      }} />
  )
}
