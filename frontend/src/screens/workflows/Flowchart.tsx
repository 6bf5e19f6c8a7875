// The flowchart canvas: flow.ts's nodes and edges drawn with @xyflow/react,
// read-only. Steps stack top to bottom with the End node under them; an
// edge to the next node runs straight down, a failure edge around the
// left, a skip or a loop around the right — so no two edges share a line.
// Loaded lazily (WorkflowChart): the library and its styles come with the
// first chart.
import {
  Handle, MarkerType, Position, ReactFlow, useNodesInitialized, useReactFlow,
  type Edge, type FitViewOptions, type Node, type NodeProps,
} from '@xyflow/react'
import '@xyflow/react/dist/style.css'
import { useEffect, useMemo } from 'react'
import { useTheme } from '../../lib/theme'
import { ROW, type FlowEdge, type FlowGraph, type FlowNode } from './flow'

const STEP_W = 240
const END_W = 90

interface StepData extends Record<string, unknown> {
  node: FlowNode
  /** The step an execution is at. */
  current?: boolean
  /** How many times an execution launched it. */
  visits?: number
}

type StepNode = Node<StepData, 'step' | 'end'>

function StepBox({ data }: NodeProps<StepNode>) {
  const { node, current, visits } = data
  return (
    <div className={`wf-node${current ? ' current' : ''}${visits ? ' visited' : ''}`} style={{ width: STEP_W }} data-step={node.label}>
      <Handle type="target" position={Position.Top} id="top" isConnectable={false} />
      <Handle type="target" position={Position.Left} id="left-in" style={{ top: '30%' }} isConnectable={false} />
      <Handle type="source" position={Position.Left} id="left-out" style={{ top: '70%' }} isConnectable={false} />
      <Handle type="target" position={Position.Right} id="right-in" style={{ top: '30%' }} isConnectable={false} />
      <Handle type="source" position={Position.Right} id="right-out" style={{ top: '70%' }} isConnectable={false} />
      <div className="wf-node-title">
        <span className="wf-node-index">{node.index + 1}</span>
        <span className="wf-node-name">{node.label}</span>
        {visits ? <span className="wf-node-visits" title="Times launched">×{visits}</span> : null}
      </div>
      {node.agent && <div className="wf-node-agent">{node.agent}</div>}
      {(node.gate || node.badges.length > 0) && (
        <div className="wf-node-badges">
          {node.gate && <span className="wf-badge wf-badge-gate">gate: {node.gate.pass} / {node.gate.fail}</span>}
          {node.badges.map((b) => <span key={b} className="wf-badge">{b}</span>)}
        </div>
      )}
      <Handle type="source" position={Position.Bottom} id="bottom" isConnectable={false} />
    </div>
  )
}

function EndBox() {
  return (
    <div className="wf-node wf-node-end" style={{ width: END_W }}>
      <Handle type="target" position={Position.Top} id="top" isConnectable={false} />
      <Handle type="target" position={Position.Left} id="left-in" isConnectable={false} />
      <Handle type="target" position={Position.Right} id="right-in" isConnectable={false} />
      End
    </div>
  )
}

const nodeTypes = { step: StepBox, end: EndBox }

const COLORS: Record<FlowEdge['kind'] | 'back', string> = {
  next: 'var(--wf-edge)', success: 'var(--wf-edge)', failure: 'var(--error)', back: 'var(--warn)',
}

function toEdges(edges: FlowEdge[], graph: FlowGraph): Edge[] {
  const label = (id: string) => graph.nodes.find((n) => n.id === id)?.label ?? id
  // Edges around one side are spaced apart, the longest outermost.
  const span = (e: FlowEdge) => Math.abs((graph.nodes.find((n) => n.id === e.target)?.index ?? 0) - (graph.nodes.find((n) => n.id === e.source)?.index ?? 0))
  const offsets = new Map<string, number>()
  for (const side of ['left', 'right']) {
    const list = edges.filter((e) => (e.kind === 'failure' ? 'left' : e.around ? 'right' : '') === side).sort((a, b) => span(a) - span(b))
    list.forEach((e, k) => offsets.set(e.id, 24 + k * 16))
  }
  return edges.map((e) => {
    const side = e.kind === 'failure' ? 'left' : e.around ? 'right' : ''
    const color = e.back ? COLORS.back : COLORS[e.kind]
    return {
      id: e.id,
      source: e.source,
      target: e.target,
      sourceHandle: side ? `${side}-out` : 'bottom',
      targetHandle: side ? `${side}-in` : 'top',
      type: side ? 'smoothstep' : 'straight',
      ...(side ? { pathOptions: { offset: offsets.get(e.id) ?? 24, borderRadius: 10 } } : {}),
      label: e.label || undefined,
      className: `wf-edge wf-edge-${e.kind}${e.back ? ' wf-edge-back' : ''}`,
      style: { stroke: color, strokeWidth: e.back ? 2 : 1.5, ...(e.kind === 'failure' ? { strokeDasharray: '6 4' } : {}) },
      markerEnd: { type: MarkerType.ArrowClosed, color, width: 16, height: 16 },
      ariaLabel: `${label(e.source)} to ${label(e.target)}${e.label ? ` (${e.label})` : ''}${e.back ? ', a loop' : ''}`,
      selectable: false,
      focusable: false,
    } satisfies Edge
  })
}

/**
 * How the chart fits its box: fitting frames the nodes only, so the sides
 * keep room for the edges drawn around the column and their labels
 * (screen pixels, at least the graph's own at any zoom up to 1).
 */
function fitOptions(graph: FlowGraph) {
  const around = (side: 'left' | 'right') => graph.edges.filter((e) => (e.kind === 'failure' ? 'left' : e.around ? 'right' : '') === side).length
  const room = (n: number) => (n ? 24 + n * 16 + 56 : 16)
  // The same on both sides, so the column stands in the middle.
  const x: `${number}px` = `${Math.max(room(around('left')), room(around('right')))}px`
  return { padding: { top: '20px', bottom: '20px', left: x, right: x }, maxZoom: 1 } satisfies FitViewOptions
}

/** Fits the chart again when its shape changes (the editor's preview grows as steps are added). */
function FitOnChange({ shape, graph }: { shape: string; graph: FlowGraph }) {
  const { fitView } = useReactFlow()
  const ready = useNodesInitialized()
  useEffect(() => {
    if (ready) void fitView(fitOptions(graph))
    // The shape says when to fit again; the graph is read as it is then.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [shape, ready, fitView])
  return null
}

export default function FlowchartCanvas({ graph, current, visits, height }: { graph: FlowGraph; current?: string; visits?: Record<string, number>; height: number }) {
  const theme = useTheme()
  const nodes = useMemo<StepNode[]>(() => graph.nodes.map((n) => ({
    id: n.id,
    type: n.kind,
    position: { x: n.kind === 'end' ? (STEP_W - END_W) / 2 : 0, y: n.index * ROW },
    data: { node: n, current: n.id === current, visits: visits?.[n.id] },
    draggable: false, selectable: false, connectable: false, focusable: false,
    ariaRole: 'group',
    ariaLabel: n.kind === 'end' ? 'End' : `Step ${n.index + 1}: ${n.label}${n.agent ? `, run by ${n.agent}` : ''}${n.gate ? `, a gate (${n.gate.pass} or ${n.gate.fail})` : ''}${n.badges.length ? `, ${n.badges.join(', ')}` : ''}${n.id === current ? ' — the current step' : ''}`,
  })), [graph, current, visits])
  const edges = useMemo(() => toEdges(graph.edges, graph), [graph])
  const shape = graph.nodes.map((n) => n.id).join(' ') + '|' + graph.edges.map((e) => e.id + e.target).join(' ')
  return (
    <div className="wf-canvas" style={{ height }}>
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        colorMode={theme === 'dark' ? 'dark' : 'light'}
        fitView
        fitViewOptions={fitOptions(graph)}
        minZoom={0.3}
        maxZoom={1.5}
        nodesDraggable={false}
        nodesConnectable={false}
        nodesFocusable={false}
        edgesFocusable={false}
        elementsSelectable={false}
        disableKeyboardA11y
        zoomOnScroll={false}
        zoomOnDoubleClick={false}
        preventScrolling={false}
        panOnDrag
      >
        <FitOnChange shape={shape} graph={graph} />
      </ReactFlow>
    </div>
  )
}
