import { useQueryClient } from '@tanstack/react-query'
import { useId, useState, type FormEvent } from 'react'
import { api, errorText, ok, type Schemas } from '../../lib/api'
import { keys, refresh } from '../../lib/queries'

/** What POST /skill-imports answers: the repository, its commit, and what happened to each SKILL.md. */
export type ImportReport = Schemas['ImportResult']

/**
 * Import skills by URL: a github.com repository brings every SKILL.md it
 * holds, any other http(s) URL one raw SKILL.md. The report lists what was
 * created, updated, left unchanged and skipped (with the reason).
 */
export function SkillImport() {
  const qc = useQueryClient()
  const id = useId()
  const [url, setUrl] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')
  const [report, setReport] = useState<ImportReport | null>(null)

  async function run(e: FormEvent) {
    e.preventDefault()
    setBusy(true)
    setError('')
    setReport(null)
    try {
      setReport(await ok(api.POST('/api/v1/skill-imports', { body: { url: url.trim() } })))
      await refresh(qc, keys.skills)
    } catch (err) {
      setError(errorText(err))
    } finally {
      setBusy(false)
    }
  }

  return (
    <form className="card form skill-import" onSubmit={run} aria-label="Import skills">
      <div className="field">
        <label htmlFor={id}>Import from a URL</label>
        <div className="inline">
          <input id={id} className="grow" type="url" value={url} required spellCheck={false} placeholder="https://github.com/owner/repo"
            aria-describedby={`${id}-hint`} onChange={(e) => setUrl(e.target.value)} />
          <button className="btn btn-primary" disabled={busy || !url.trim()}>{busy ? 'Importing…' : 'Import'}</button>
        </div>
        <small className="hint" id={`${id}-hint`}>
          A github.com repository imports every SKILL.md in it (public repositories only); any other URL imports one raw SKILL.md. Importing again refreshes what was not edited here.
        </small>
      </div>
      {error && <p className="error-text" role="alert">{error}</p>}
      {report && <ImportResult report={report} />}
    </form>
  )
}

const LISTS = [
  ['created', 'Created'],
  ['updated', 'Updated'],
  ['unchanged', 'Unchanged'],
] as const

/** The per-file report of one import. */
export function ImportResult({ report: r }: { report: ImportReport }) {
  const none = !r.created.length && !r.updated.length && !r.unchanged.length && !r.skipped.length
  return (
    <section className="import-report" role="status" aria-label="Import report">
      <p>
        <b>{r.repo || r.source_repo}</b>{r.commit ? <> @ <code>{r.commit.slice(0, 7)}</code></> : null}:{' '}
        {[
          `${r.created.length} created`, `${r.updated.length} updated`, `${r.unchanged.length} unchanged`, `${r.skipped.length} skipped`,
        ].join(', ')}
      </p>
      {r.truncated && (
        <p className="callout callout-warn">GitHub cut the repository's file listing short: files past the cut were not seen, so some skills may be missing.</p>
      )}
      {none && <p className="muted small">No SKILL.md was found there.</p>}
      {LISTS.map(([key, label]) => r[key].length > 0 && (
        <div key={key} className="import-group" data-group={key}>
          <h4>{label}</h4>
          <ul aria-label={label}>
            {r[key].map((f) => <li key={f.id || f.path}><code>{f.model_name}</code> <span className="muted small">{f.path}</span></li>)}
          </ul>
        </div>
      ))}
      {r.skipped.length > 0 && (
        <div className="import-group" data-group="skipped">
          <h4>Skipped</h4>
          <ul aria-label="Skipped">
            {r.skipped.map((s) => <li key={s.path}><code>{s.path}</code>: <span className="warn-text">{s.reason}</span></li>)}
          </ul>
        </div>
      )}
    </section>
  )
}
