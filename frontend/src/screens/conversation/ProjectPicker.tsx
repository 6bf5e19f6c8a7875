import { Icon } from '../../components/Icon'
import { useProjects } from '../../lib/queries'
import { navigate } from '../../lib/router'
import { openTerminal } from '../terminal/terminalTarget'

/** The project the next message binds the conversation to (none: a chat with no files or commands). */
export function ProjectPicker({ value, onChange, disabled }: { value: string; onChange: (id: string) => void; disabled?: boolean }) {
  const projects = useProjects()
  const list = projects.data ?? []
  if (!list.length) return null
  return (
    <select aria-label="Project" value={value} disabled={disabled} title="The first message with a project binds this conversation to it for good"
      onChange={(e) => onChange(e.target.value)}>
      <option value="">No project</option>
      {list.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
    </select>
  )
}

/** A bound conversation's project: fixed, since the binding is permanent. Another project means a new conversation. */
export function ProjectChip({ projectId }: { projectId: string }) {
  const projects = useProjects()
  const name = projects.data?.find((p) => p.id === projectId)?.name
  return (
    <>
      <span className="project-chip" data-project-id={projectId} title="This conversation works in this project for good">
        <Icon name="folder" size={13} /> {name ?? (projects.isLoading ? '…' : 'project')}
      </span>
      <button type="button" className="btn btn-ghost btn-xs" onClick={() => navigate('/')}>New session on another project</button>
    </>
  )
}

/** Opens the bound project's terminal from the conversation. */
export function ProjectTerminalButton({ projectId }: { projectId: string }) {
  const projects = useProjects()
  const name = projects.data?.find((p) => p.id === projectId)?.name ?? 'project'
  return (
    <button className="btn btn-ghost btn-sm" title="A shell in this conversation’s project" onClick={() => openTerminal({ projectId, name })}>
      <Icon name="terminal" size={14} /> Terminal
    </button>
  )
}
