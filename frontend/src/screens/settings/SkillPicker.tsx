import { useId, useState } from 'react'
import type { FieldAria } from '../../components/Field'
import { choiceOf, useSkills, type SkillsChoice } from '../../lib/skills'

interface Props {
  /** The agent's selection: null = every skill it may use, [] = none, else these ids. */
  value: string[] | null
  onChange: (v: string[] | null) => void
  /** Who the agent belongs to: a private agent may read its owner's skills and the shared ones, a shared agent only shared ones. */
  agent: { scope: 'private' | 'global'; ownerId: string }
  aria?: FieldAria
}

/**
 * Which skills an agent reads: all it may use (null), none ([]), or those
 * picked by the name the model knows them by. A picked id no visible skill
 * has any more stays listed and checked, so a save does not drop it unseen.
 */
export function SkillPicker({ value, onChange, agent, aria }: Props) {
  const skills = useSkills()
  const base = useId()
  // The mode is the person's choice: "specific" with nothing ticked yet stays specific.
  const [mode, setMode] = useState<SkillsChoice>(() => choiceOf(value))
  // An admin lists everyone's skills; the agent may use only these.
  const list = (Array.isArray(skills.data) ? skills.data : []).filter((k) => k.scope === 'global' || (agent.scope === 'private' && k.owner_id === agent.ownerId))
  const picked = value ?? []
  const missing = picked.filter((id) => !list.some((k) => k.id === id))
  const choose = (m: SkillsChoice) => {
    setMode(m)
    onChange(m === 'all' ? null : m === 'none' ? [] : picked)
  }
  const toggle = (id: string, on: boolean) => onChange(on ? [...picked, id] : picked.filter((x) => x !== id))
  const modes: [SkillsChoice, string, string][] = [
    ['all', 'All skills', 'every skill this agent may use, now and later'],
    ['none', 'None', 'no skills index, no read_skill'],
    ['some', 'Specific skills', 'only those ticked below'],
  ]
  return (
    <div className="skill-picker" {...aria}>
      <div className="checks" role="radiogroup" aria-label="Skills this agent reads">
        {modes.map(([m, label, about]) => (
          <label key={m} className="check" title={about}>
            <input type="radio" name={`${base}-mode`} checked={mode === m} onChange={() => choose(m)} /> {label}
          </label>
        ))}
      </div>
      {mode === 'some' && (
        <div className="skill-choices" role="group" aria-label="Skills to read">
          {list.map((k) => (
            <div key={k.id} className="mcp-tool-choice">
              <input id={`${base}-${k.id}`} type="checkbox" checked={picked.includes(k.id)} aria-describedby={`${base}-${k.id}-about`}
                onChange={(e) => toggle(k.id, e.target.checked)} />
              <label htmlFor={`${base}-${k.id}`}><code>{k.model_name}</code></label>
              <div id={`${base}-${k.id}-about`} className="muted small clamp">{k.description}</div>
            </div>
          ))}
          {missing.map((id) => (
            <div key={id} className="mcp-tool-choice unavailable">
              <input id={`${base}-${id}`} type="checkbox" checked onChange={() => toggle(id, false)} />
              <label htmlFor={`${base}-${id}`}><code>{id}</code> <span className="pill pill-warn">unavailable</span></label>
              <div className="muted small">No skill you can see has this id any more.</div>
            </div>
          ))}
          {skills.isSuccess && !list.length && !missing.length && <p className="muted small">No skills yet: write or import one in Settings → Skills.</p>}
          {mode === 'some' && !picked.length && list.length > 0 && <p className="muted small">Nothing ticked: the agent reads no skills.</p>}
        </div>
      )}
    </div>
  )
}
