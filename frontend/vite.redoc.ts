// Redoc's standalone bundle for the /docs page (src/docs/main.ts), as a
// module that exports its address: in a build, a hashed asset of the build;
// under the dev server, a path the server answers.
//
// The bundle is served with one change. Its sidebar ends in an "API docs by
// Redocly" link whose logo is an <img> from Redocly's CDN, rendered
// whatever the options say: a request outside this server that the /docs
// policy refuses (img-src 'self'), and a refusal logged on every visit.
// The image's address is emptied, which loads nothing (an empty src is an
// error without a request); the link and its text stay.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Plugin } from 'vite'

const id = 'virtual:redoc-standalone'
const resolvedID = '\0' + id
const devPath = '/@redoc-standalone.js'
const logo = 'https://cdn.redoc.ly/redoc/logo-mini.svg'

/** The standalone bundle without its CDN logo; throws when the bundle no longer names it exactly once (a Redoc upgrade: check the page again). */
function bundle(): string {
  const file = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js')
  const parts = readFileSync(file, 'utf8').split(logo)
  if (parts.length !== 2) {
    throw new Error(`redoc-standalone: ${file} names ${logo} ${parts.length - 1} times, not once; check what the page loads from outside`)
  }
  return parts.join('')
}

/** The plugin resolving `virtual:redoc-standalone` to the bundle's address. */
export function redocStandalone(): Plugin {
  let serving = false
  return {
    name: 'redoc-standalone',
    configResolved(config) {
      serving = config.command === 'serve'
    },
    resolveId(source) {
      return source === id ? resolvedID : undefined
    },
    load(moduleID) {
      if (moduleID !== resolvedID) return undefined
      if (serving) return `export default ${JSON.stringify(devPath)}`
      const ref = this.emitFile({ type: 'asset', name: 'redoc.standalone.js', source: bundle() })
      return `export default import.meta.ROLLUP_FILE_URL_${ref}`
    },
    configureServer(server) {
      server.middlewares.use(devPath, (_req, res) => {
        res.setHeader('Content-Type', 'text/javascript')
        res.end(bundle())
      })
    },
  }
}
