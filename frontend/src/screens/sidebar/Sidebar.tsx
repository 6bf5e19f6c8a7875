import { useQueryClient } from '@tanstack/react-query'
import { useMemo, useState } from 'react'
import { Icon } from '../../components/Icon'
import { getToken, setToken } from '../../lib/auth'
import { useMe, useSessions } from '../../lib/queries'
import { navigate, sessionPath, useRoute } from '../../lib/router'
import { openShortcutsHelp } from '../../lib/shortcuts'
import { setTheme, useTheme } from '../../lib/theme'
import { useBusySessions } from '../../live/store'
import { MessageHits } from './MessageHits'
import { SessionRow } from './SessionRow'
import { at, HOST_SIGN_IN } from '../../lib/base'

/**
 * The caller's conversations (pinned first, then newest), search — titles
 * filtered as one types, and the words of their messages asked of the
 * server — and the way to settings.
 */
export function Sidebar({ onNavigate }: { onNavigate: () => void }) {
  const route = useRoute()
  const sessions = useSessions()
  const me = useMe()
  const busy = useBusySessions()
  const theme = useTheme()
  const qc = useQueryClient()
  const [query, setQuery] = useState('')

  const list = useMemo(() => {
    const q = query.trim().toLowerCase()
    return (sessions.data ?? [])
      .filter((s) => !q || (s.name || 'New conversation').toLowerCase().includes(q))
      .sort((a, b) => Number(b.pinned) - Number(a.pinned) || b.updated_at.localeCompare(a.updated_at))
  }, [sessions.data, query])

  function go(path: string) {
    navigate(path)
    onNavigate()
  }

  async function signOut() {
    // Revoke the token only after this tab stopped using it, so nothing
    // in flight meets a 401.
    const token = getToken()
    setToken(null)
    qc.clear()
    navigate('/', true)
    if (token) await fetch(at('/api/v1/auth/logout'), { method: 'POST', headers: { Authorization: `Bearer ${token}` } }).catch(() => {})
  }

  const activeId = route.name === 'session' ? route.id : undefined
  return (
    <nav className="sidebar" aria-label="Conversations">
      <div className="sidebar-head">
        <div className="brand">
          <img src={at('/favicon.svg')} alt="" width={22} height={22} />
          <span>agents-server</span>
        </div>
        <div className="sidebar-new">
          <button className="btn btn-primary" title="New conversation" onClick={() => go('/')}>
            <Icon name="plus" /> New<span className="visually-hidden"> conversation</span>
          </button>
          <button className={`btn${route.name === 'workflows' ? ' active' : ''}`} aria-current={route.name === 'workflows' ? 'page' : undefined}
            title="Workflows: definitions and runs" onClick={() => go('/workflows')}>
            <Icon name="flow" /> Workflows
          </button>
        </div>
        <label className="search">
          <Icon name="search" />
          <input type="search" placeholder="Search conversations" aria-label="Search conversations" value={query} onChange={(e) => setQuery(e.target.value)} />
        </label>
      </div>
      <ul className="session-list">
        {sessions.isLoading && <li className="muted pad">Loading…</li>}
        {sessions.data && !list.length && (
          <li className="muted pad">{query ? 'No conversation matches.' : 'No conversations yet — start one.'}</li>
        )}
        {list.map((s) => (
          <SessionRow key={s.id} session={s} active={s.id === activeId} status={busy[s.id]} onOpen={() => go(`/s/${s.id}`)} />
        ))}
      </ul>
      <MessageHits query={query} onOpen={(h) => go(sessionPath(h.session_id, h.entry_id))} />
      <div className="sidebar-foot">
        <button className={`nav-btn${route.name === 'settings' && route.tab === 'projects' ? ' active' : ''}`} onClick={() => go('/settings/projects')}>
          <Icon name="folder" /> Projects
        </button>
        <button className={`nav-btn${route.name === 'usage' ? ' active' : ''}`} aria-current={route.name === 'usage' ? 'page' : undefined}
          onClick={() => go(me.data?.role === 'admin' ? '/usage' : '/usage/me')}>
          <Icon name="chart" /> Usage
        </button>
        <button className={`nav-btn${route.name === 'settings' && route.tab !== 'projects' ? ' active' : ''}`} onClick={() => go('/settings/providers')}>
          <Icon name="settings" /> Settings
        </button>
        <div className="foot-row">
          <span className="who" title={me.data?.role}>{me.data?.username ?? ''}</span>
          <button className="icon-btn" aria-label={theme === 'dark' ? 'Light theme' : 'Dark theme'} title={theme === 'dark' ? 'Light theme' : 'Dark theme'}
            onClick={() => setTheme(theme === 'dark' ? 'light' : 'dark')}>
            <Icon name={theme === 'dark' ? 'sun' : 'moon'} />
          </button>
          <button className="icon-btn help-btn" aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)" onClick={openShortcutsHelp}>?</button>
          {!HOST_SIGN_IN && (
            <button className="icon-btn" aria-label="Sign out" title="Sign out" onClick={signOut}>
              <Icon name="logout" />
            </button>
          )}
        </div>
      </div>
    </nav>
  )
}
