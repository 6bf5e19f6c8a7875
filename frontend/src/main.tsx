import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { App } from './App'
import { ApiError } from './lib/api'
import { captureTokenFromHash } from './lib/auth'
import './lib/theme'
import './styles/theme.css'
import './styles/app.css'
import './styles/search.css'
// Last: its phone-width rules override the rest.
import './styles/phone.css'

captureTokenFromHash()
// The link pasted into a tab that is already open only changes the fragment.
window.addEventListener('hashchange', captureTokenFromHash)

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 5_000,
      refetchOnWindowFocus: false,
      retry: (n, e) => !(e instanceof ApiError && e.status < 500) && n < 2,
    },
  },
})

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
)
