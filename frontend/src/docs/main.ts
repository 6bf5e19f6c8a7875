// The /docs page: the served OpenAPI document rendered by Redoc, so the
// page needs nothing from outside the server. Redoc 2's packages run on
// the Node the README states (20.19+); Redoc 3 and Scalar ask for Node 22.
//
// The page loads Redoc's standalone bundle, a classic script with its own
// React, rather than the React component: the component's build reads
// modules npm does not place where it looks (yaml 1, next to vite's
// yaml 2) and Node globals (process), which the standalone bundle was
// built to do without. vite.redoc.ts serves it from this server.
import type { RedocRawOptions, SideNavStyleEnum } from 'redoc'
import redocURL from 'virtual:redoc-standalone'
import { at } from '../lib/base'

/** What the standalone bundle sets on window. */
interface RedocGlobal {
  init(specURL: string, options: RedocRawOptions, element: HTMLElement | null, done?: (err?: Error) => void): void
}

declare global {
  interface Window {
    Redoc?: RedocGlobal
  }
}

// The UI's own type (src/styles/theme.css): Redoc's theme names Montserrat
// and Roboto, web fonts this page does not load.
const font = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
const mono = "ui-monospace, 'SF Mono', 'Cascadia Code', 'JetBrains Mono', Menlo, Consolas, monospace"

const options: RedocRawOptions = {
  // Search indexes in a Web Worker started from a blob: URL, which the
  // /docs policy refuses (scripts come from this server only). The
  // reference is one page, so the browser's find covers it.
  disableSearch: true,
  // Operation ids are what generated clients call the operations: the
  // sidebar lists them, the headings give the summaries.
  sideNavStyle: 'id-only' as SideNavStyleEnum,
  theme: {
    // The UI's accent (--accent).
    colors: { primary: { main: '#4f46e5' } },
    typography: { fontFamily: font, headings: { fontFamily: font }, code: { fontFamily: mono } },
  },
}

const script = document.createElement('script')
script.src = redocURL
script.onload = () => window.Redoc?.init(at('/api/v1/openapi.yaml'), options, document.getElementById('docs'))
document.head.append(script)
