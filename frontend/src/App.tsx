import { useQueryClient } from '@tanstack/react-query'
import { useEffect, useRef, useSyncExternalStore } from 'react'
import { LiveRegion } from './components/LiveRegion'
import { Toasts } from './components/Toasts'
import { getToken, onTokenChange } from './lib/auth'
import { bus } from './lib/bus'
import { liveStore } from './live/store'
import { wireLive } from './live/wire'
import { SignIn } from './screens/SignIn'
import { closeTerminal } from './screens/terminal/terminalTarget'
import { Workbench } from './screens/Workbench'

export function App() {
  const token = useSyncExternalStore(onTokenChange, getToken)
  const qc = useQueryClient()

  useEffect(() => wireLive(qc), [qc])

  // Signing out — or a sign-in link for someone else pasted into this tab —
  // drops everything held for the previous user.
  const previous = useRef(token)
  useEffect(() => {
    bus.connect(token)
    const swapped = !!token && !!previous.current && previous.current !== token
    previous.current = token
    if (!token || swapped) {
      liveStore.reset()
      closeTerminal()
      // Signed out, the screens go away with the cache; swapped, they stay
      // and refetch as the new user.
      if (swapped) void qc.resetQueries()
      else qc.clear()
    }
  }, [token, qc])

  return (
    <>
      {token ? <Workbench /> : <SignIn />}
      <Toasts />
      <LiveRegion />
    </>
  )
}
