/** "26–50 of 73" and the way to the pages either side; drawn only past one page. */
export function Pager({ label, offset, size, total, onOffset }: { label: string; offset: number; size: number; total: number; onOffset: (o: number) => void }) {
  if (total <= size && offset === 0) return null
  const last = Math.min(offset + size, total)
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" className="btn btn-ghost btn-sm" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - size))}>‹ Previous</button>
      <span className="muted small" aria-live="polite">{total ? `${offset + 1}–${last} of ${total}` : 'none'}</span>
      <button type="button" className="btn btn-ghost btn-sm" disabled={last >= total} onClick={() => onOffset(offset + size)}>Next ›</button>
    </nav>
  )
}
