import { useInfiniteQuery, useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { Field } from '../../components/Field'
import { api, errorText, ok, type AuditRecord } from '../../lib/api'
import { downloadFile } from '../../lib/download'
import { noFilters, queryOf, type Filters } from './auditQuery'
import '../../styles/audit.css'

const PAGE = 100

/** The kinds of object the log records, in the order people look for them. */
const KINDS = ['user', 'token', 'provider', 'agent', 'mcp_server', 'skill', 'skill_source', 'workflow', 'guardrail', 'trigger',
  'sandbox', 'project', 'setting', 'approval', 'secret_key']

/** Admins: who did what, when and from where; filtered, paged back, exported as JSON Lines. */
export function AuditTab() {
  const [f, setF] = useState<Filters>(noFilters)
  const [exportError, setExportError] = useState('')
  const users = useQuery({ queryKey: ['users'], queryFn: () => ok(api.GET('/api/v1/auth/users')) })
  const query = queryOf(f)
  const log = useInfiniteQuery({
    queryKey: ['audit', query],
    initialPageParam: '',
    queryFn: ({ pageParam }) =>
      ok(api.GET('/api/v1/audit', { params: { query: { ...query, limit: PAGE, ...(pageParam ? { cursor: pageParam } : {}) } } })),
    getNextPageParam: (last) => last.next_cursor || undefined,
  })
  const records = log.data?.pages.flatMap((p) => p.records) ?? []

  async function exportLog() {
    setExportError('')
    try {
      await downloadFile(`/api/v1/audit/export?${new URLSearchParams(query).toString()}`, 'audit.jsonl')
    } catch (e) {
      setExportError(errorText(e))
    }
  }

  return (
    <div className="tab-page audit">
      <p className="muted">
        Every sign-in, token, user change and write to configuration, each approval decision and each webhook turned away:
        who, when, from which address, and the names of the fields changed — never their values.
      </p>
      <form className="card form audit-filters" aria-label="Filter the audit log" onSubmit={(e) => e.preventDefault()}>
        <div className="grid3">
          <Field label="Person">{(id) => (
            <select id={id} value={f.actor} onChange={(e) => setF({ ...f, actor: e.target.value })}>
              <option value="">Anyone</option>
              {users.data?.map((u) => <option key={u.id} value={u.id}>{u.username}</option>)}
            </select>
          )}</Field>
          <Field label="Object">{(id) => (
            <select id={id} value={f.kind} onChange={(e) => setF({ ...f, kind: e.target.value })}>
              <option value="">Any kind</option>
              {KINDS.map((k) => <option key={k} value={k}>{k.replace('_', ' ')}</option>)}
            </select>
          )}</Field>
          <Field label="Action" hint="For example provider.update or signin">{(id) => (
            <input id={id} value={f.action} onChange={(e) => setF({ ...f, action: e.target.value })} placeholder="Any action" />
          )}</Field>
          <Field label="From">{(id) => <input id={id} type="date" value={f.since} onChange={(e) => setF({ ...f, since: e.target.value })} />}</Field>
          <Field label="To">{(id) => <input id={id} type="date" value={f.until} onChange={(e) => setF({ ...f, until: e.target.value })} />}</Field>
        </div>
        <div className="form-actions">
          <button type="button" className="btn btn-ghost" onClick={() => setF(noFilters)}>Clear filters</button>
          <button type="button" className="btn" onClick={() => void exportLog()}>Export JSON Lines</button>
        </div>
        {exportError && <p className="error-text" role="alert">{exportError}</p>}
      </form>
      {log.isLoading && <p className="muted">Loading…</p>}
      {log.isError && <p className="error-text" role="alert">{errorText(log.error)}</p>}
      {log.isSuccess && !records.length && <p className="empty muted">Nothing recorded matches these filters.</p>}
      {records.length > 0 && (
        <div className="table-scroll">
          <table className="table table-stack audit-log" aria-label="Audit log">
            <thead>
              <tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Object</th><th scope="col">Fields</th><th scope="col">Outcome</th></tr>
            </thead>
            <tbody>
              {records.map((r) => <AuditRow key={r.seq} r={r} />)}
            </tbody>
          </table>
        </div>
      )}
      {log.hasNextPage && (
        <button className="btn" onClick={() => void log.fetchNextPage()} disabled={log.isFetchingNextPage}>
          {log.isFetchingNextPage ? 'Loading…' : 'Load older records'}
        </button>
      )}
    </div>
  )
}

function who(r: AuditRecord): string {
  if (r.actor_kind === 'user') return r.actor_name || 'someone not signed in'
  return r.actor_name ? `${r.actor_kind}: ${r.actor_name}` : r.actor_kind
}

function AuditRow({ r }: { r: AuditRecord }) {
  const at = new Date(r.at)
  return (
    <tr data-action={r.action} data-outcome={r.outcome}>
      <td data-label="When"><time dateTime={r.at} title={at.toISOString()}>{at.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' })}</time></td>
      <td data-label="Who">{who(r)}{r.address && <div className="muted small">{r.address}</div>}</td>
      <td data-label="Action"><code>{r.action}</code>{r.method && <div className="muted small">by {r.method}</div>}</td>
      <td data-label="Object">{r.object_name || r.object_id || '—'}<div className="muted small">{r.object_kind.replace('_', ' ')}</div></td>
      <td data-label="Fields" className="audit-fields">{r.fields.length ? r.fields.join(', ') : '—'}</td>
      <td data-label="Outcome">
        <span className={r.outcome === 'success' ? 'pill' : 'pill pill-error'}>{r.outcome === 'success' ? 'done' : 'refused'}</span>
        {r.reason && <div className="muted small">{r.reason}</div>}
      </td>
    </tr>
  )
}
