// The open conversation's background tasks, for what draws them outside
// the task list: a spawn_task card's live status, a task approval's label.
import { createContext, useContext } from 'react'
import type { Task } from '../../lib/api'

export interface ConversationTasks {
  sessionId: string
  byId: ReadonlyMap<string, Task>
}

export const TasksContext = createContext<ConversationTasks | null>(null)

/** The conversation's tasks; null where there is none (a task's own transcript, a test). */
export const useConversationTasks = () => useContext(TasksContext)
