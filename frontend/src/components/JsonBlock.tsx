/** Text shown as pretty JSON when it parses, as it is otherwise. */
export function pretty(text: string | undefined): string {
  if (!text) return ''
  const t = text.trim()
  if (!(t.startsWith('{') || t.startsWith('['))) return text
  try {
    return JSON.stringify(JSON.parse(t), null, 2)
  } catch {
    return text
  }
}

export function JsonBlock({ value, label }: { value: unknown; label?: string }) {
  const text = typeof value === 'string' ? pretty(value) : JSON.stringify(value, null, 2)
  return (
    <div className="json-block">
      {label && <div className="json-label">{label}</div>}
      {/* Focusable: it scrolls, and a keyboard must be able to scroll it. */}
      <pre tabIndex={0}>{text}</pre>
    </div>
  )
}
