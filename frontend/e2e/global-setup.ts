// Starts the stack once for the run (the binary AGENTS_BIN names, or one
// built now; the scripted model; the MCP reference server when installed; a
// temp data dir) and hands its addresses, the bootstrap admin's token and a
// folder for the workers' locks to the workers through the environment.
// Without Chromium it starts nothing: every test then skips (fixtures.ts),
// and under AGENTS_CI=1 the config has already refused to run.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { chromiumMissing, frontendDir, startStack } from './stack.mjs'

export const STACK_LOG = join(frontendDir, 'e2e-results', 'stack.log')

export default async function globalSetup() {
  const missing = chromiumMissing()
  if (missing) {
    console.log(`e2e: SKIP — ${missing}`)
    process.env.E2E_SKIP = missing
    return
  }
  mkdirSync(join(frontendDir, 'e2e-results'), { recursive: true })
  writeFileSync(STACK_LOG, '')
  const stack = await startStack({ logFile: STACK_LOG })
  process.env.E2E_BASE_URL = stack.baseURL
  process.env.E2E_TOKEN = stack.token
  process.env.E2E_SCRIPTED_URL = stack.scriptedURL
  process.env.E2E_EVERYTHING_URL = stack.everythingURL
  process.env.E2E_LOCK_DIR = stack.tmp
  process.env.E2E_BIN = stack.bin
  process.env.E2E_E2B_API = stack.e2b.api
  process.env.E2E_E2B_DOMAIN = stack.e2b.domain
  process.env.E2E_E2B_MISSING = stack.e2b.missing
  process.env.E2E_CHATGPT_ISSUER = stack.chatgpt.issuer
  process.env.E2E_CHATGPT_BACKEND = stack.chatgpt.backend
  return async () => {
    await stack.stop()
  }
}
