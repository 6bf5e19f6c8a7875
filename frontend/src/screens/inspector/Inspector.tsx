import { Icon } from '../../components/Icon'
import { TabList, tabPanelProps } from '../../components/TabList'
import { TaskPanel } from '../tasks/TaskPanel'
import { ContextPanel } from './ContextPanel'
import { closeInspector, showTab, tabFor, useInspector, type InspectorTab } from './inspectorState'
import { TracePanel } from './TracePanel'

/** The right column: what the runs did (traces), what fills the model's window (context), and an opened background task. */
export function Inspector({ sessionId }: { sessionId: string }) {
  const state = useInspector()
  const tab = tabFor(state, sessionId)
  const task = state.task?.sessionId === sessionId ? state.task : null
  const tabs: [InspectorTab, string][] = [['trace', 'Trace'], ['context', 'Context'], ...(task ? [['task', 'Task'] as [InspectorTab, string]] : [])]
  return (
    <aside className="inspector" aria-label="Inspector">
      <div className="tabs">
        {/* Only tabs in the tablist: the close button sits beside it. */}
        <TabList label="Inspector panels" tabs={tabs.map(([id, label]) => ({ id, label }))} selected={tab} onSelect={(id) => showTab(id as InspectorTab)}
          idBase="inspector" className="tablist" />
        <span className="grow" />
        <button className="icon-btn" aria-label="Close the inspector" onClick={closeInspector}><Icon name="x" /></button>
      </div>
      <div className="inspector-body" {...tabPanelProps('inspector', tab)}>
        {tab === 'task' && task ? <TaskPanel key={task.taskId} taskId={task.taskId} /> : tab === 'context' ? <ContextPanel sessionId={sessionId} /> : <TracePanel sessionId={sessionId} />}
      </div>
    </aside>
  )
}
