import { useEffect, useRef } from 'react'
import type { Entry } from '../../lib/api'
import { notify } from '../../lib/notices'
import { useRoute } from '../../lib/router'

interface Pages {
  isSuccess: boolean
  hasNextPage: boolean
  isFetchingNextPage: boolean
  fetchNextPage: () => Promise<unknown>
}

/**
 * The message the address names (/s/<id>?m=<entry>, a search hit's link),
 * loaded: earlier pages are fetched, as "Load earlier messages" would, until
 * it is among the entries. It is undefined until then, and when the message
 * cannot be shown — on another version of the conversation, or gone — which
 * the person is told once.
 */
export function useMessageTarget(sessionId: string, messages: Pages, entries: Entry[]): string | undefined {
  const route = useRoute()
  const target = route.name === 'session' && route.id === sessionId ? route.m : undefined
  const told = useRef<string | undefined>(undefined)
  const found = target ? entries.find((e) => e.id === target) : undefined
  const { isSuccess, hasNextPage, isFetchingNextPage, fetchNextPage } = messages

  useEffect(() => {
    if (!target || found || !isSuccess || isFetchingNextPage) return
    if (hasNextPage) {
      void fetchNextPage()
    } else if (told.current !== target) {
      told.current = target
      notify('That message is no longer in this conversation.')
    }
  }, [target, found, isSuccess, hasNextPage, isFetchingNextPage, fetchNextPage])

  useEffect(() => {
    if (target && found && found.on_path === false && told.current !== target) {
      told.current = target
      notify('That message is in another version of this conversation: switch versions with ‹ › to see it.')
    }
  }, [target, found])

  return found && found.on_path !== false ? target : undefined
}
