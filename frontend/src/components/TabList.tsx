import { useRef, type KeyboardEvent } from 'react'

/** A tab of a TabList: its id (the value selected) and its label. */
export interface TabItem { id: string; label: string }

/**
 * A tab list as the WAI-ARIA tabs pattern has it: the selected tab alone
 * in the Tab order, the arrow keys (Home and End too) moving to a tab and
 * selecting it, each tab naming the one panel it controls — the element
 * with id `${idBase}-panel`, which tabPanelProps gives its role and name.
 */
export function TabList({ label, tabs, selected, onSelect, idBase, className }: {
  label: string
  tabs: TabItem[]
  selected: string
  onSelect: (id: string) => void
  idBase: string
  className?: string
}) {
  const refs = useRef<(HTMLButtonElement | null)[]>([])

  function onKeyDown(e: KeyboardEvent<HTMLDivElement>) {
    const at = tabs.findIndex((t) => t.id === selected)
    const next = { ArrowRight: at + 1, ArrowLeft: at - 1 + tabs.length, Home: 0, End: tabs.length - 1 }[e.key]
    if (next === undefined) return
    e.preventDefault()
    const i = next % tabs.length
    onSelect(tabs[i].id)
    refs.current[i]?.focus()
  }

  return (
    <div role="tablist" aria-label={label} className={className} onKeyDown={onKeyDown}>
      {tabs.map((t, i) => (
        <button key={t.id} ref={(el) => { refs.current[i] = el }} role="tab" id={`${idBase}-tab-${t.id}`} aria-controls={`${idBase}-panel`}
          aria-selected={t.id === selected} tabIndex={t.id === selected ? 0 : -1} className={`tab${t.id === selected ? ' active' : ''}`}
          onClick={() => onSelect(t.id)}>
          {t.label}
        </button>
      ))}
    </div>
  )
}

/** The attributes of the panel a TabList controls, named by its selected tab. */
export function tabPanelProps(idBase: string, selected: string) {
  return { role: 'tabpanel', id: `${idBase}-panel`, 'aria-labelledby': `${idBase}-tab-${selected}` } as const
}
