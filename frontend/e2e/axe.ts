// axe-core, injected into the page (its own source), for the specs that
// check accessibility. A spec using it lets the script in past the app's
// CSP and measures colours as they settle:
//   test.use({ bypassCSP: true, reducedMotion: 'reduce' })
import { createRequire } from 'node:module'
import type { Page } from '@playwright/test'
import type { AxeResults, Result } from 'axe-core'
import { expect } from './fixtures'

const axeSource = createRequire(import.meta.url).resolve('axe-core')

function describe(v: Result) {
  const nodes = v.nodes.slice(0, 6).map((n) => `    ${n.target.join(' ')}: ${n.failureSummary?.replace(/\s+/g, ' ')}`)
  return `${v.id} (${v.impact}) ${v.help}\n${nodes.join('\n')}`
}

/** Runs axe on the page as it stands; fails listing every serious or critical violation. */
export async function expectAccessible(page: Page, what: string) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: axeSource })
  const results = await page.evaluate(() => (window as unknown as { axe: { run: (c: Document, o: object) => Promise<AxeResults> } }).axe.run(document, { resultTypes: ['violations'] }))
  const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
  expect(bad.length, `${what}: axe found\n${bad.map(describe).join('\n')}`).toBe(0)
}
