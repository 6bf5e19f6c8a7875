import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, errorText, ok, type Skill } from '../../lib/api'
import { notify } from '../../lib/notices'
import { keys, refresh, useMe } from '../../lib/queries'
import { skillOrigin } from '../../lib/skills'
import { ScopeButton } from './ScopeButton'

/** What the caller may do with a row: edit as its author or, for a global one, as an admin; delete as its author or an admin. */
export interface SkillRights { edit: boolean; remove: boolean }

/**
 * One skill: the name the model calls it, its description, who sees it and
 * where it came from. Deleting asks once more; the server refuses while an
 * agent selects the skill, and its message (naming them) is shown here.
 */
export function SkillRow({ skill: k, rights, onEdit }: { skill: Skill; rights: SkillRights; onEdit: () => void }) {
  const qc = useQueryClient()
  const [confirming, setConfirming] = useState(false)
  const [error, setError] = useState('')
  const origin = skillOrigin(k)

  async function remove() {
    setConfirming(false)
    setError('')
    try {
      await ok(api.DELETE('/api/v1/skills/{id}', { params: { path: { id: k.id } } }))
      await refresh(qc, keys.skills)
    } catch (e) {
      setError(errorText(e))
    }
  }

  return (
    <li className="row row-stack" data-skill={k.model_name} data-owner={k.owner_id} aria-label={k.model_name}>
      <div className="row-line">
        <div className="row-main">
          <code className="skill-name">{k.model_name}</code>{' '}
          <span className="pill" title="Who sees it">{k.scope}</span>
          {k.detached && <> <span className="pill pill-warn" title="Edited here: imports no longer update it">detached</span></>}
          <div className="small">{k.description}</div>
          {origin && <div className="muted small" data-origin>{origin}</div>}
        </div>
        {rights.edit && <button className="btn btn-ghost btn-sm" onClick={onEdit}>Edit</button>}
        {/* An imported skill moves scope with its repository's group, not alone. */}
        {k.source_repo ? <GroupScopeButton skill={k} /> : <ScopeButton kind="skills" id={k.id} scope={k.scope} />}
        {rights.remove && (confirming ? (
          <button className="btn btn-danger btn-sm" autoFocus onBlur={() => setConfirming(false)} onClick={remove}>Delete?</button>
        ) : (
          <button className="btn btn-danger btn-sm" aria-label={`Delete ${k.model_name}`} onClick={() => setConfirming(true)}>Delete</button>
        ))}
      </div>
      {error && <p className="error-text" role="alert">{error}</p>}
    </li>
  )
}

/** Admins publish every skill imported from one source (for its importer) at once, or take them back: a repository never splits. */
function GroupScopeButton({ skill: k }: { skill: Skill }) {
  const qc = useQueryClient()
  const me = useMe()
  if (me.data?.role !== 'admin' || !k.source_repo) return null
  const next = k.scope === 'global' ? 'private' : 'global'
  async function flip() {
    try {
      await ok(api.POST('/api/v1/skill-repos/scope', { body: { source_repo: k.source_repo!, owner_id: k.owner_id, scope: next } }))
      await refresh(qc, keys.skills)
    } catch (e) {
      notify(errorText(e))
    }
  }
  return (
    <button className="btn btn-ghost btn-sm" title={`Every skill imported from ${k.source_repo} moves with it`} onClick={flip}>
      {k.scope === 'global' ? 'Unpublish repository' : 'Publish repository'}
    </button>
  )
}
