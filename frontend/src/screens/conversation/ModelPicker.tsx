import '../../styles/model-picker.css'
import { useId } from 'react'
import { Icon } from '../../components/Icon'
import { errorText, type Agent } from '../../lib/api'
import { useProviderModels } from '../../lib/queries'
import { useMenu } from '../../lib/useMenu'

interface Props {
  agents: Agent[]
  /** The agent the next answer comes from (the conversation's, or the one just picked). */
  agentId: string
  onAgent: (id: string) => void
  /** The model chosen for the next answer only; '' is the agent's own. */
  model: string
  onModel: (model: string) => void
  /** While an answer is running, the choice waits: it applies to the next one. */
  disabled?: boolean
}

/**
 * The conversation header's picker: which agent answers from here on, and
 * which model answers the next message only, without editing the agent.
 * The server notes either change in the transcript when the answer starts.
 */
export function ModelPicker({ agents, agentId, onAgent, model, onModel, disabled }: Props) {
  const { open, setOpen, toggle, wrapProps } = useMenu()
  const panelId = useId()
  const agent = agents.find((a) => a.id === agentId)

  const shown = model || agent?.model || ''
  return (
    <div className="menu-wrap model-pick" {...wrapProps}>
      <button ref={toggle} type="button" className={`btn btn-sm model-pick-btn${open ? ' active' : ''}`} aria-expanded={open} aria-controls={panelId}
        title="Agent and model" onClick={() => setOpen(!open)}>
        <span className="visually-hidden">Agent and model: </span>
        <span className="model-pick-agent">{agent?.name ?? 'No agent'}</span>
        {shown && <span className="model-pick-model">{shown}{model ? ' (next answer)' : ''}</span>}
        <Icon name="chevron" size={14} />
      </button>
      {open && (
        <div className="menu model-menu" id={panelId} role="group" aria-label="Agent and model for the next answer">
          <div className="model-menu-field">
            <label htmlFor={`${panelId}-agent`}>Agent</label>
            <select id={`${panelId}-agent`} value={agentId} autoFocus disabled={disabled} onChange={(e) => { onAgent(e.target.value); onModel('') }}>
              {!agents.length && <option value="">No agents yet</option>}
              {agents.map((a) => <option key={a.id} value={a.id}>{a.name} · {a.model}</option>)}
            </select>
          </div>
          {agent && <ModelChoice agent={agent} model={model} onModel={onModel} disabled={disabled} />}
          <small className="hint">
            {disabled ? 'An answer is running: your choice applies to the next one. ' : ''}
            A new agent answers from here on; a model is for the next answer only. The conversation notes either change.
          </small>
        </div>
      )}
    </div>
  )
}

/** The model for the next answer: the provider's list when it lists one, else a name typed in. */
function ModelChoice({ agent, model, onModel, disabled }: { agent: Agent; model: string; onModel: (m: string) => void; disabled?: boolean }) {
  const models = useProviderModels(agent.provider_id ?? '')
  const offered = (models.data?.models ?? []).filter((m) => m.id !== agent.model)
  const own = `${agent.model} (the agent's own)`
  const id = useId()
  if (models.isPending && agent.provider_id) return <p className="hint">Asking the provider for its models…</p>
  if (offered.length) {
    return (
      <div className="model-menu-field">
        <label htmlFor={id}>Model for the next answer</label>
        <select id={id} value={model} disabled={disabled} onChange={(e) => onModel(e.target.value)}>
          <option value="">{own}</option>
          {offered.map((m) => <option key={m.id} value={m.id}>{m.display_name && m.display_name !== m.id ? `${m.display_name} (${m.id})` : m.id}</option>)}
          {model && !offered.some((m) => m.id === model) && <option value={model}>{model}</option>}
        </select>
      </div>
    )
  }
  return (
    <div className="model-menu-field">
      <label htmlFor={id}>Model for the next answer</label>
      <input id={id} value={model} placeholder={own} autoComplete="off" spellCheck={false} disabled={disabled}
        onChange={(e) => onModel(e.target.value.trim())} />
      <small className="hint">
        {models.isError ? `The provider's models could not be listed (${errorText(models.error)}); type a name, or leave it empty for the agent's own.` : 'Type a model name, or leave it empty for the agent\'s own.'}
      </small>
    </div>
  )
}
