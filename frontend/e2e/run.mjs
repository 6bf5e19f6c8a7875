// The browser suite: node e2e/run.mjs [name-filter]. Builds the binary with
// the UI embedded (after `npm run build`), starts it and the scripted model,
// and drives system Chromium. A failing test saves screenshots of its pages
// into an artifacts folder, printed at the end.
import { mkdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromiumOrSkip, launchBrowser, Skip, startStack } from './harness.mjs'
import { tests } from './tests.mjs'

if (!chromiumOrSkip()) process.exit(0)

const filter = process.argv[2]
const artifacts = process.env.E2E_ARTIFACTS || mkdtempSync(join(tmpdir(), 'agents-e2e-artifacts-'))
mkdirSync(artifacts, { recursive: true })
const stack = await startStack()
const ctx = await launchBrowser(join(stack.tmp, 'profile'))
ctx.setDefaultTimeout(15_000)

// Console errors fail the test that caused them.
let consoleErrors = []
const watch = (page) => {
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(`${page.url()}: ${m.text()}`) })
  page.on('pageerror', (e) => consoleErrors.push(`${page.url()}: ${e.message}`))
}
ctx.on('page', watch)
ctx.pages().forEach(watch)

const results = []
const shared = {}
for (const t of tests) {
  if (filter && !t.name.includes(filter) && !t.always) continue
  consoleErrors = []
  const started = Date.now()
  const page = ctx.pages()[0] ?? (await ctx.newPage())
  try {
    await t.fn({ ctx, page, stack, shared })
    // A test that provokes a refusal on purpose (a 400, a wrong password)
    // expects the browser's own log line for it.
    consoleErrors = consoleErrors.filter((e) => !(t.expectConsole ?? []).some((re) => re.test(e)))
    if (consoleErrors.length) throw new Error(`console errors:\n  ${consoleErrors.join('\n  ')}`)
    results.push({ name: t.name, ok: true, ms: Date.now() - started })
    console.log(`ok    ${t.name} (${Date.now() - started} ms)`)
  } catch (e) {
    if (e instanceof Skip) {
      results.push({ name: t.name, ok: true, skipped: true })
      console.log(`skip  ${t.name} — ${e.message}`)
      continue
    }
    const shots = []
    for (const [i, p] of ctx.pages().entries()) {
      const file = join(artifacts, `${t.name.replace(/\W+/g, '-')}-${i}.png`)
      await p.screenshot({ path: file, fullPage: true }).catch(() => {})
      shots.push(file)
    }
    results.push({ name: t.name, ok: false, error: e, shots })
    console.log(`FAIL  ${t.name}\n      ${String(e.stack || e).split('\n').join('\n      ')}\n      screenshots: ${shots.join(', ')}`)
  } finally {
    // Keep one page open for the next test; close extra tabs.
    for (const p of ctx.pages().slice(1)) await p.close().catch(() => {})
  }
}

await ctx.close()
await stack.stop()
const failed = results.filter((r) => !r.ok)
const skipped = results.filter((r) => r.skipped)
console.log(`\ne2e: ${results.length - failed.length - skipped.length} passed, ${failed.length} failed${skipped.length ? `, ${skipped.length} skipped` : ''}${failed.length ? ` — screenshots in ${artifacts}` : ''}`)
process.exit(failed.length ? 1 : 0)
