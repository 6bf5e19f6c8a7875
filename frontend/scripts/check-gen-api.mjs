// Fails when src/lib/apiTypes.gen.ts is not what `npm run gen:api` would
// write from openapi/openapi.yaml (the API document changed; regenerate).
// The document also describes the WebSocket/SSE events and bus commands
// (ServerEvent, ClientCommand), which src/lib/events.ts derives its types
// from: a changed event is caught here too.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'gen-api-'))
try {
  const fresh = join(dir, 'apiTypes.gen.ts')
  execFileSync(process.execPath, [join(root, 'node_modules/openapi-typescript/bin/cli.js'), join(root, '../openapi/openapi.yaml'), '-o', fresh], { stdio: 'pipe' })
  const committed = readFileSync(join(root, 'src/lib/apiTypes.gen.ts'), 'utf8')
  if (readFileSync(fresh, 'utf8') !== committed) {
    console.error('src/lib/apiTypes.gen.ts is stale: openapi/openapi.yaml changed. Run `npm run gen:api` in frontend/ and commit the result.')
    process.exit(1)
  }
  console.log('apiTypes.gen.ts is up to date')
} finally {
  rmSync(dir, { recursive: true, force: true })
}
