interface Todo { content: string; status: string }

function parse(json: string | undefined): Todo[] | null {
  if (!json) return null
  try {
    const v = JSON.parse(json)
    const list = Array.isArray(v) ? v : v?.todos
    return Array.isArray(list) ? list.filter((t) => t && typeof t.content === 'string') : null
  } catch {
    return null
  }
}

const mark: Record<string, string> = { completed: '✓', in_progress: '◐', pending: '○' }

/** The `todo` renderer: todo_write's checklist (display.extra.todos, or the call's arguments while it runs). */
export function TodoList({ todos, args }: { todos?: string; args?: string }) {
  const list = parse(todos) ?? parse(args)
  if (!list) return null
  return (
    <ul className="todo-list" aria-label="Checklist">
      {list.map((t, i) => (
        <li key={i} className={`todo todo-${t.status}`}>
          <span className="todo-mark" aria-label={t.status.replace('_', ' ')}>{mark[t.status] ?? '•'}</span>
          <span>{t.content}</span>
        </li>
      ))}
    </ul>
  )
}
