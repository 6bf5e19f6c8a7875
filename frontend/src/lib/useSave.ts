import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { ApiError, errorText } from './api'

/**
 * A form's save: run the write, refresh the list it changed, then onDone;
 * a refusal lands as the message plus the server's per-field errors.
 */
export function useSave(queryKey: readonly unknown[], onDone?: () => void) {
  const qc = useQueryClient()
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [error, setError] = useState('')

  async function save(write: () => Promise<unknown>) {
    setError('')
    try {
      await write()
      await qc.invalidateQueries({ queryKey })
      onDone?.()
    } catch (err) {
      setErrors(err instanceof ApiError ? err.fields : {})
      setError(errorText(err))
    }
  }

  return { save, errors, error, setError }
}

/**
 * After a 409 on a compare-and-set write: the row as stored now when its
 * revision moved (someone saved meanwhile), else null — the server refused
 * the change itself and its message says why.
 */
export async function movedRevision<T extends { revision: number }>(reread: () => Promise<T>, revision: number): Promise<T | null> {
  const fresh = await reread().catch(() => null)
  return fresh && fresh.revision !== revision ? fresh : null
}
