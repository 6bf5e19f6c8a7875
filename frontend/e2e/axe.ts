// axe-core (its own source, injected into the page) for every spec that
// checks a screen's accessibility. The app's CSP (default-src 'self')
// refuses an injected script: a spec that calls expectAccessible runs its
// pages with `test.use({ bypassCSP: true })`; axe is the test's, not the app's.
import { createRequire } from 'node:module'
import type { Page } from '@playwright/test'
import type { AxeResults, Result } from 'axe-core'
import { expect } from './fixtures'

const axeSource = createRequire(import.meta.url).resolve('axe-core')

function describe(v: Result) {
  const nodes = v.nodes.slice(0, 6).map((n) => `    ${n.target.join(' ')}: ${n.failureSummary?.replace(/\s+/g, ' ')}`)
  return `${v.id} (${v.impact}) ${v.help}\n${nodes.join('\n')}`
}

/** One axe run over the page as it stands: its serious and critical violations. */
async function violations(page: Page) {
  const results = await page.evaluate(() => (window as unknown as { axe: { run: (c: Document, o: object) => Promise<AxeResults> } }).axe.run(document, { resultTypes: ['violations'] }))
  return results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
}

/**
 * Runs axe on the page as it stands, in the light theme and in the dark
 * one; fails listing every serious or critical violation of either. The
 * theme is flipped on the root element, as the toggle does, and put back:
 * the scan must not change what the test goes on with.
 */
export async function expectAccessible(page: Page, what: string) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: axeSource })
  const was = await page.evaluate(() => document.documentElement.dataset.theme ?? 'light')
  const report: string[] = []
  for (const theme of [was, was === 'dark' ? 'light' : 'dark']) {
    await page.evaluate((t) => { document.documentElement.dataset.theme = t }, theme)
    report.push(...(await violations(page)).map((v) => `[${theme}] ${describe(v)}`))
  }
  await page.evaluate((t) => { document.documentElement.dataset.theme = t }, was)
  expect(report.length, `${what}: axe found\n${report.join('\n')}`).toBe(0)
}
