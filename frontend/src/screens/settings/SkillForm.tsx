import { useQueryClient } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { Field } from '../../components/Field'
import { api, ApiError, errorText, ok, type Skill } from '../../lib/api'
import { refresh, keys } from '../../lib/queries'
import { previewSkill, SKILL_TEMPLATE } from '../../lib/skills'

/**
 * Write a new skill or edit one: the whole SKILL.md in a textarea, with a
 * live preview of what its frontmatter says (name, description, or what is
 * missing). The server reads the document again at save time; its refusal
 * is shown at the field.
 */
export function SkillForm({ skill, admin, onDone }: { skill?: Skill; admin: boolean; onDone: () => void }) {
  const qc = useQueryClient()
  const [content, setContent] = useState(skill?.content ?? SKILL_TEMPLATE)
  const [scope, setScope] = useState<'private' | 'global'>('private')
  const [fieldError, setFieldError] = useState('')
  const [error, setError] = useState('')
  const [saving, setSaving] = useState(false)
  const preview = previewSkill(content)

  async function save(e: FormEvent) {
    e.preventDefault()
    setError('')
    setFieldError('')
    setSaving(true)
    try {
      if (skill) await ok(api.PUT('/api/v1/skills/{id}', { params: { path: { id: skill.id } }, body: { content } }))
      else await ok(api.POST('/api/v1/skills', { body: admin ? { content, scope } : { content } }))
      await refresh(qc, keys.skills)
      onDone()
    } catch (err) {
      const fields = err instanceof ApiError ? err.fields : {}
      if (fields.content) setFieldError(`The document ${fields.content}`)
      setError(fields.content ? 'Not saved: the document needs attention (see the message under it).' : errorText(err))
    } finally {
      setSaving(false)
    }
  }

  const title = skill ? `Edit ${skill.model_name}` : 'New skill'
  return (
    <form className="card form skill-form" onSubmit={save} aria-label={title}>
      <h2>{title}</h2>
      {skill?.source_repo && !skill.detached && (
        <p className="callout callout-warn">
          This skill was imported from {skill.source_repo}. Saving a change detaches it: a later import of the repository no longer updates it.
        </p>
      )}
      <div className="skill-editor">
        <Field label="SKILL.md" error={fieldError}
          hint="A frontmatter block (name:, description:) between --- lines, then the instructions the model reads">{(id, aria) => (
          <textarea id={id} {...aria} className="mono" rows={16} value={content} spellCheck={false}
            onChange={(e) => { setContent(e.target.value); setFieldError('') }} />
        )}</Field>
        <section className="skill-preview" aria-label="Frontmatter preview" aria-live="polite">
          <h3>Preview</h3>
          <dl>
            <div><dt>Name</dt><dd>{preview.name ? <code>{preview.name}</code> : <span className="muted">—</span>}</dd></div>
            <div><dt>Description</dt><dd>{preview.description || <span className="muted">—</span>}</dd></div>
          </dl>
          {preview.problems.length > 0 ? (
            <ul className="skill-problems">
              {preview.problems.map((p) => <li key={p} className="warn-text">The document {p}</li>)}
            </ul>
          ) : (
            <p className="muted small">The frontmatter reads well. The server has the last word when you save.</p>
          )}
        </section>
      </div>
      {!skill && admin && (
        <Field label="Scope" hint="Global: every user's agents may read it">{(id) => (
          <select id={id} value={scope} onChange={(e) => setScope(e.target.value as 'private' | 'global')}>
            <option value="private">private</option>
            <option value="global">global</option>
          </select>
        )}</Field>
      )}
      {error && <p className="error-text" role="alert">{error}</p>}
      <div className="form-actions">
        <button className="btn btn-primary" disabled={saving}>{saving ? 'Saving…' : 'Save'}</button>
        <button type="button" className="btn btn-ghost" onClick={onDone}>Cancel</button>
      </div>
    </form>
  )
}
