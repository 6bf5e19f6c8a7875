// Renders a component as the app does (inside a QueryClientProvider) with
// the server's answers already in the query cache, so nothing is fetched:
// a test states what the server said and asserts what a user sees.
import { QueryClient, QueryClientProvider, type QueryKey } from '@tanstack/react-query'
import { render } from '@testing-library/react'
import type { ReactElement } from 'react'

export function renderWithData(ui: ReactElement, data: [QueryKey, unknown][] = []) {
  const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false, refetchOnWindowFocus: false } } })
  for (const [key, value] of data) qc.setQueryData(key, value)
  return { qc, ...render(<QueryClientProvider client={qc}>{ui}</QueryClientProvider>) }
}
