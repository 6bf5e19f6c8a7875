import { useState } from 'react'
import { errorText, type Skill } from '../../lib/api'
import { useMe } from '../../lib/queries'
import { useSkills } from '../../lib/skills'
import { SkillForm } from './SkillForm'
import { SkillImport } from './SkillImport'
import { SkillRow, type SkillRights } from './SkillRow'

/** Skills: SKILL.md documents agents read on demand — written here or imported from a repository. */
export function SkillsTab() {
  const me = useMe()
  const admin = me.data?.role === 'admin'
  const skills = useSkills()
  const [editing, setEditing] = useState<Skill | 'new' | null>(null)
  const rights = (k: Skill): SkillRights => {
    const own = k.owner_id === me.data?.id
    return { edit: own || (k.scope === 'global' && admin), remove: own || admin }
  }
  return (
    <div className="tab-page">
      <div className="tab-intro">
        <p className="muted">
          A skill is a SKILL.md: know-how an agent reads when a task matches its description. Agents see an index of their skills and read one with <code>read_skill</code>.
        </p>
        <button className="btn btn-primary" onClick={() => setEditing('new')}>New skill</button>
      </div>
      {editing && (
        <SkillForm key={editing === 'new' ? 'new' : editing.id} skill={editing === 'new' ? undefined : editing} admin={admin} onDone={() => setEditing(null)} />
      )}
      <SkillImport />
      {skills.isError && <p className="error-text" role="alert">{errorText(skills.error)}</p>}
      {skills.data?.length === 0 && !editing && <p className="empty muted">No skills yet. Write one, or import a repository's.</p>}
      <ul className="rows" aria-label="Skills">
        {skills.data?.map((k) => <SkillRow key={k.id} skill={k} rights={rights(k)} onEdit={() => setEditing(k)} />)}
      </ul>
    </div>
  )
}
