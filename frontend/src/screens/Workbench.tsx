import { lazy, Suspense, useState, useSyncExternalStore } from 'react'
import { Icon } from '../components/Icon'
import { useRoute } from '../lib/router'
import { closeShortcutsHelp, openShortcutsHelp, shortcutsHelp, subscribeShortcutsHelp } from '../lib/shortcuts'
import { Conversation } from './conversation/Conversation'
import { NewConversation } from './conversation/NewConversation'
import { Inspector } from './inspector/Inspector'
import { toggleInspector, useInspector } from './inspector/inspectorState'
import { Settings } from './settings/Settings'
import { ShortcutsDialog } from './ShortcutsDialog'
import { Sidebar } from './sidebar/Sidebar'
import { closeTerminal, useTerminalTarget } from './terminal/terminalTarget'
import { useGlobalShortcuts } from './useGlobalShortcuts'
import { UsageScreen } from './usage/UsageScreen'
import { WorkflowsHub } from './workflows/WorkflowsHub'

// xterm.js is loaded only when a terminal opens.
const TerminalPanel = lazy(() => import('./terminal/TerminalPanel'))

/** The three columns: sidebar | conversation (or settings, the workflows hub, usage) | inspector. */
export function Workbench() {
  const route = useRoute()
  const [navOpen, setNavOpen] = useState(false)
  const inspector = useInspector()
  const sessionId = route.name === 'session' ? route.id : undefined
  const showInspector = !!sessionId && inspector.open
  const terminal = useTerminalTarget()
  const help = useSyncExternalStore(subscribeShortcutsHelp, shortcutsHelp)
  useGlobalShortcuts(openShortcutsHelp)

  return (
    <div className={`workbench${navOpen ? ' nav-open' : ''}${showInspector ? ' with-inspector' : ''}`}>
      <Sidebar onNavigate={() => setNavOpen(false)} />
      <div className="scrim" onClick={() => setNavOpen(false)} aria-hidden />
      <main className="main">
        <div className="mobile-bar">
          <button className="icon-btn" aria-label="Open the sidebar" onClick={() => setNavOpen(true)}>
            <Icon name="menu" size={20} />
          </button>
          <span className="brand">agents-server</span>
        </div>
        {route.name === 'settings' ? (
          <Settings tab={route.tab} />
        ) : route.name === 'workflows' ? (
          <WorkflowsHub route={route} />
        ) : route.name === 'usage' ? (
          <UsageScreen key={route.mine ? 'me' : 'all'} mine={route.mine} />
        ) : sessionId ? (
          <Conversation key={sessionId} sessionId={sessionId} inspectorOpen={showInspector} onToggleInspector={toggleInspector} />
        ) : (
          <NewConversation />
        )}
      </main>
      {showInspector && <Inspector sessionId={sessionId} />}
      {help.open && <ShortcutsDialog key={help.opening} onClose={() => closeShortcutsHelp(help.opening)} />}
      {terminal && (
        <Suspense fallback={<div className="terminal-panel terminal-loading muted" role="status">Loading the terminal…</div>}>
          <TerminalPanel key={terminal.projectId} target={terminal} onClose={closeTerminal} />
        </Suspense>
      )}
    </div>
  )
}
