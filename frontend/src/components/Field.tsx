import { useId, useState, type ReactNode } from 'react'

/** A labelled control with its hint and its validation message. */
export function Field({ label, hint, error, children, inline }: { label: string; hint?: string; error?: string; children: (id: string) => ReactNode; inline?: boolean }) {
  const id = useId()
  return (
    <div className={`field${inline ? ' field-inline' : ''}${error ? ' has-error' : ''}`} data-field={label}>
      <label htmlFor={id}>{label}</label>
      {children(id)}
      {hint && !error && <small className="hint">{hint}</small>}
      {error && <small className="error-text" role="alert">{error}</small>}
    </div>
  )
}

/** JSON text edited as text; the value changes only when the text parses. */
export function JsonField({ id, value, onChange, rows = 4 }: { id: string; value: unknown; onChange: (v: unknown) => void; rows?: number }) {
  const [text, setText] = useState(() => JSON.stringify(value ?? null, null, 2))
  const [bad, setBad] = useState(false)
  return (
    <>
      <textarea id={id} className={`mono${bad ? ' invalid' : ''}`} rows={rows} value={text} spellCheck={false}
        onChange={(e) => {
          setText(e.target.value)
          try {
            onChange(JSON.parse(e.target.value || 'null'))
            setBad(false)
          } catch {
            setBad(true)
          }
        }} />
      {bad && <small className="error-text">Not valid JSON yet.</small>}
    </>
  )
}

/** A list of names edited as comma-separated text. */
export function ListField({ id, value, onChange, placeholder }: { id: string; value: string[]; onChange: (v: string[]) => void; placeholder?: string }) {
  const [text, setText] = useState(value.join(', '))
  return (
    <input id={id} value={text} placeholder={placeholder}
      onChange={(e) => {
        setText(e.target.value)
        onChange(e.target.value.split(',').map((s) => s.trim()).filter(Boolean))
      }} />
  )
}
