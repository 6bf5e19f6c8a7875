import { useState } from 'react'
import { Icon } from '../../components/Icon'
import { JsonBlock } from '../../components/JsonBlock'
import type { Approval } from '../../lib/api'
import { useAgents } from '../../lib/queries'
import { taskChip } from '../../lib/tasks'
import type { ToolItem } from '../../timeline/model'
import { openTask } from '../inspector/inspectorState'
import { useConversationTasks } from '../tasks/TaskContext'
import { ApprovalControls } from './ApprovalControls'
import { MCPResult, mcpCallOf } from './MCPResult'
import { PatchView } from './PatchView'
import { PlanView } from './PlanView'
import { SkillResult, skillOf } from './SkillResult'
import { TerminalOutput } from './TerminalOutput'
import { TodoList } from './TodoList'

/** Renderers this build draws itself; others fall back to the raw result. */
const DRAWN = new Set(['todo', 'terminal', 'plan'])

function status(t: ToolItem, approval?: Approval, live?: boolean) {
  if (approval) return { label: 'Needs approval', tone: 'warn' }
  if (t.output !== undefined) return t.isError ? { label: 'Error', tone: 'error' } : { label: 'Done', tone: 'ok' }
  if (t.needsApproval) return { label: 'Waiting for approval', tone: 'warn' }
  return live ? { label: 'Running', tone: 'run' } : { label: 'No result', tone: 'muted' }
}

/** The task verbs: their results carry the task they are about (display.extra.task_id). */
const TASK_VERBS: Record<string, string> = { spawn_task: 'Background task', task_status: 'Task status', task_retry: 'Task retry', task_stop: 'Task stop' }

/** The label a spawn_task call gave its task, before any result names it. */
function spawnLabel(args: string): string {
  try {
    const v = JSON.parse(args) as { label?: unknown }
    return typeof v.label === 'string' ? v.label.trim() : ''
  } catch {
    return ''
  }
}

/**
 * How a task verb's card reads: the task it is about, and its status chip —
 * a spawn_task card stands for its task, so it follows the task list live;
 * the other verbs' cards report the status their answer gave.
 */
function useTaskCard(item: ToolItem) {
  const tasks = useConversationTasks()
  const verb = TASK_VERBS[item.name]
  if (!verb) return null
  const extra = item.display?.extra ?? {}
  const taskId = extra.task_id
  const current = item.name === 'spawn_task' && taskId ? tasks?.byId.get(taskId) : undefined
  const status = (current?.status ?? extra.task_status) as Parameters<typeof taskChip>[0]['status'] | undefined
  const label = current?.label || item.display?.title || (item.name === 'spawn_task' ? spawnLabel(item.arguments) : '')
  return {
    taskId,
    title: item.name === 'spawn_task' ? label || verb : label ? `${verb} · ${label}` : verb,
    summary: current?.summary || item.display?.summary,
    chip: status && !item.isError ? taskChip({ status, queued: current?.queued }) : undefined,
    status,
    open: taskId && tasks ? () => openTask(tasks.sessionId, taskId) : undefined,
  }
}

/** A tool call and its result, matched by call_id, with the display the tool gave it. */
export function ToolCard({ item, approval, live }: { item: ToolItem; approval?: Approval; live?: boolean }) {
  const [open, setOpen] = useState(false)
  const task = useTaskCard(item)
  if (item.handoff) {
    return (
      <div className="handoff-note" role="note">
        <Icon name="chevron" size={14} /> {item.display?.title ?? `Handed off (${item.name})`}
      </div>
    )
  }
  const st = (!approval && task?.chip) || status(item, approval, live)
  // What is waiting for a decision is shown, not hidden behind a click.
  const expanded = open || !!approval
  // A plan waiting for approval has no display yet: it is drawn as a plan all the same.
  const renderer = item.display?.renderer ?? (item.name === 'submit_plan' ? 'plan' : undefined)
  // An MCP tool's result carries its server and its parts: drawn as they are, not as raw text.
  const mcp = mcpCallOf(item.display)
  // read_skill: the skill it read, by the name the model knows it; the document folds under the head.
  const skill = mcpCallOf(item.display) ? undefined : skillOf(item.name, item.display)
  const title = task?.title ?? item.display?.title ?? (mcp ? `${mcp.server} · ${mcp.tool}` : item.name || 'Tool result')
  const summary = task ? task.summary : item.display?.summary
  const head = (
    <button className="tool-head" aria-expanded={expanded} onClick={() => setOpen((o) => !o)}>
      <span className={`chev${expanded ? ' open' : ''}`}><Icon name="chevron" size={14} /></span>
      <span className="tool-title" title={title}>{title}</span>
      {(item.display?.title || task) && item.name && <code className="tool-name">{item.name}</code>}
      {summary && <span className="tool-summary">{summary}</span>}
      <span className={`pill pill-${st.tone}`}>{st.label}</span>
    </button>
  )
  return (
    <div className={`tool-card tone-${st.tone}${task ? ' task-card' : ''}`} data-tool={item.name} data-call-id={item.callId} data-renderer={renderer} data-mcp-server={mcp?.server} data-skill={skill?.modelName}
      data-task-id={task?.taskId} data-task-status={task?.status}>
      {task?.open ? (
        <div className="tool-head-row">
          {head}
          <button className="btn btn-ghost btn-xs task-open-btn" title="Open the task in the inspector" onClick={task.open}>Open task</button>
        </div>
      ) : head}
      {renderer === 'todo' && <TodoList todos={item.display?.extra?.todos} args={item.arguments} />}
      {renderer === 'terminal' && <TerminalOutput output={item.output} progress={item.progress} />}
      {renderer === 'plan' && <PlanView extra={item.display?.extra?.plan} args={item.arguments} />}
      {mcp && item.output !== undefined && <MCPResult call={mcp} output={item.output} isError={item.isError} />}
      {skill && item.output !== undefined && !item.isError && <SkillResult modelName={skill.modelName} content={item.output} />}
      {expanded && !(renderer === 'plan' && item.output === undefined) && (
        <div className="tool-body">
          {item.name === 'apply_patch' && <PatchView args={item.arguments} />}
          {item.arguments && renderer !== 'plan' && item.name !== 'apply_patch' && <JsonBlock label="Arguments" value={item.arguments} />}
          {renderer !== 'terminal' && item.progress && item.output === undefined && <JsonBlock label="Output so far" value={item.progress} />}
          {mcp?.structured && <JsonBlock label="Structured content" value={mcp.structured} />}
          {renderer !== 'terminal' && !mcp && !skill && item.output !== undefined && <JsonBlock label={item.isError ? 'Error' : 'Result'} value={item.output} />}
          {renderer && !DRAWN.has(renderer) && <div className="muted small">renderer: {renderer}</div>}
        </div>
      )}
      {approval && <ApprovalControls approval={approval} />}
    </div>
  )
}

/**
 * A pending approval whose call is not drawn (paged off, or not yet
 * stored), or a background task's: its call is in the task's transcript,
 * so the card names the task, and opens it.
 */
export function ApprovalCard({ approval }: { approval: Approval }) {
  const tasks = useConversationTasks()
  if (approval.tool_name === STEP_APPROVAL) return <StepApprovalCard approval={approval} />
  const taskId = approval.task_id
  const label = taskId ? tasks?.byId.get(taskId)?.label || 'a background task' : ''
  return (
    <div className="tool-card tone-warn" data-tool={approval.tool_name} data-call-id={approval.tool_call_id} data-task-id={taskId}>
      <div className="tool-head static">
        <span className="tool-title">{approval.tool_name}</span>
        {taskId && <span className="pill task-tag" title="Its call is in the task's own transcript">from task {label}</span>}
        {taskId && tasks && (
          <button className="btn btn-ghost btn-xs task-open-btn" title="Open the task in the inspector" onClick={() => openTask(tasks.sessionId, taskId)}>Open task</button>
        )}
        <span className="pill pill-warn">Needs approval</span>
      </div>
      {approval.tool_name === 'submit_plan'
        ? <PlanView args={approval.arguments} />
        : <div className="tool-body"><JsonBlock label="Arguments" value={approval.arguments} /></div>}
      <ApprovalControls approval={approval} />
    </div>
  )
}

/** The tool name of a pause_before approval: it holds a workflow before a step, not a tool call. */
export const STEP_APPROVAL = 'workflow_step'

interface StepAsk { workflow?: string; step?: string; step_id?: string; agent?: string; prompt?: string; progress?: string; task_id?: string }

function stepAsk(args: string): StepAsk {
  try {
    const v = JSON.parse(args) as unknown
    return v && typeof v === 'object' ? (v as StepAsk) : {}
  } catch {
    return {}
  }
}

/**
 * A workflow held before a pause_before step: "Run step deploy of
 * release?", where it is, who runs the step and the prompt it starts with.
 * Approving runs the step; rejecting cancels the execution.
 */
function StepApprovalCard({ approval }: { approval: Approval }) {
  const tasks = useConversationTasks()
  const agents = useAgents()
  const ask = stepAsk(approval.arguments)
  const taskId = approval.task_id || ask.task_id
  const agent = agents.data?.find((a) => a.id === ask.agent)?.name
  const question = `Run step ${ask.step || '?'} of ${ask.workflow || 'the workflow'}?`
  return (
    <div className="tool-card tone-warn step-approval" data-tool={approval.tool_name} data-call-id={approval.tool_call_id} data-task-id={taskId}>
      <div className="tool-head static">
        <span className="tool-title">{question}</span>
        {taskId && tasks && (
          <button className="btn btn-ghost btn-xs task-open-btn" title="Open the execution in the inspector" onClick={() => openTask(tasks.sessionId, taskId)}>Open task</button>
        )}
        <span className="pill pill-warn">Needs approval</span>
      </div>
      <div className="tool-body">
        <div className="muted small">{[ask.progress, agent && `run by ${agent}`].filter(Boolean).join(' · ')}{ask.prompt ? '. The step starts with:' : ''}</div>
        {ask.prompt && <div className="reasoning-text step-prompt">{ask.prompt}</div>}
      </div>
      <ApprovalControls approval={approval} />
    </div>
  )
}
