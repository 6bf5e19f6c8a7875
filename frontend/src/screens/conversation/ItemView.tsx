import type { Agent, Approval } from '../../lib/api'
import type { TimelineItem } from '../../timeline/model'
import { AssistantMessage, Compaction, Note, Reasoning, TaskNotice, TriggerFired, Unknown, UserMessage, WorkflowStart, type MessageActions } from './Items'
import { ToolCard } from './ToolCard'

interface Props {
  item: TimelineItem
  agent?: Agent
  /** The pending approval of a tool item's call. */
  approval?: Approval
  live?: boolean
  actions?: MessageActions
}

const none: MessageActions = {}

/** One timeline item, drawn by its kind: the conversation's and a task's transcript alike. */
export function ItemView({ item, agent, approval, live, actions = none }: Props) {
  switch (item.kind) {
    case 'user':
      return <UserMessage item={item} actions={actions} />
    case 'assistant':
      return <AssistantMessage item={item} agent={agent} actions={actions} />
    case 'reasoning':
      return <Reasoning item={item} />
    case 'tool':
      return <ToolCard item={item} approval={approval} live={live} />
    case 'note':
      return <Note item={item} actions={actions} />
    case 'compaction':
      return <Compaction item={item} />
    case 'task_notice':
      return <TaskNotice item={item} />
    case 'workflow_start':
      return <WorkflowStart item={item} />
    case 'trigger_fired':
      return <TriggerFired item={item} />
    case 'unknown':
      return <Unknown item={item} />
  }
}
