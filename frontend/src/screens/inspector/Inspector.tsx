import { useState } from 'react'
import { Icon } from '../../components/Icon'
import { ContextPanel } from './ContextPanel'
import { TracePanel } from './TracePanel'

/** The right column: what the runs did (traces) and what fills the model's window (context). */
export function Inspector({ sessionId, onClose }: { sessionId: string; onClose: () => void }) {
  const [tab, setTab] = useState<'trace' | 'context'>('trace')
  return (
    <aside className="inspector" aria-label="Inspector">
      <div className="tabs" role="tablist">
        <button role="tab" aria-selected={tab === 'trace'} className={`tab${tab === 'trace' ? ' active' : ''}`} onClick={() => setTab('trace')}>Trace</button>
        <button role="tab" aria-selected={tab === 'context'} className={`tab${tab === 'context' ? ' active' : ''}`} onClick={() => setTab('context')}>Context</button>
        <span className="grow" />
        <button className="icon-btn" aria-label="Close the inspector" onClick={onClose}><Icon name="x" /></button>
      </div>
      <div className="inspector-body" role="tabpanel">
        {tab === 'trace' ? <TracePanel sessionId={sessionId} /> : <ContextPanel sessionId={sessionId} />}
      </div>
    </aside>
  )
}
