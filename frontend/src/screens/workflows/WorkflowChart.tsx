import { lazy, Suspense, useMemo } from 'react'
import { flowGraph, ROW, type FlowStep } from './flow'

// @xyflow/react and its styles load with the first chart drawn.
const FlowchartCanvas = lazy(() => import('./Flowchart'))

interface Props {
  steps: FlowStep[]
  /** Names the figure for assistive technology: "Flowchart of build". */
  label: string
  /** An execution's current step, highlighted. */
  current?: string
  /** How many times an execution launched each step, by step id. */
  visits?: Record<string, number>
  /** The tallest the canvas may be; it is sized to the steps below that. */
  maxHeight?: number
}

/**
 * A workflow drawn as a flowchart: its steps in order, the End node, every
 * edge labelled (a gate's words, on success, on failure) and loops told
 * apart. The legend says how to read the lines.
 */
export function WorkflowChart({ steps, label, current, visits, maxHeight = 640 }: Props) {
  const graph = useMemo(() => flowGraph(steps), [steps])
  const height = Math.min(maxHeight, ROW * (steps.length + 1) + 20)
  return (
    <figure className="wf-chart" aria-label={label}>
      <Suspense fallback={<div className="wf-canvas muted small pad" style={{ height }} role="status">Drawing the flowchart…</div>}>
        <FlowchartCanvas graph={graph} current={current} visits={visits} height={height} />
      </Suspense>
      <figcaption className="wf-legend muted small">
        <span><i className="wf-key wf-key-next" aria-hidden /> success</span>
        <span><i className="wf-key wf-key-failure" aria-hidden /> failure</span>
        <span><i className="wf-key wf-key-back" aria-hidden /> loop (↺, at most max_laps times)</span>
      </figcaption>
    </figure>
  )
}
