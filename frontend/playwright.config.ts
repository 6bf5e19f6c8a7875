// The browser suite: @playwright/test driving system Chromium against the
// real binary and the scripted model (e2e/global-setup.ts starts them once
// for the run). `go tool task e2e` runs it; see the README.
import { defineConfig } from '@playwright/test'
import { chromiumLaunch, chromiumMissing } from './e2e/stack.mjs'

const missing = chromiumMissing()
if (missing && process.env.AGENTS_CI === '1') {
  throw new Error(`e2e: ${missing}; AGENTS_CI=1 requires the browser suite`)
}

/** A name part to run only the tests whose title holds it (`go tool task e2e -- <name part>`), matched literally. */
const filter = process.env.E2E_GREP

export default defineConfig({
  testDir: 'e2e',
  testMatch: '*.spec.ts',
  // Everything a run leaves: per-test traces and screenshots of failures,
  // the HTML report and the stack's log. Gitignored.
  outputDir: 'e2e-results/artifacts',
  reporter: [['list'], ['html', { outputFolder: 'e2e-results/report', open: 'never' }]],
  globalSetup: './e2e/global-setup.ts',
  grep: filter ? new RegExp(filter.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : undefined,
  // Each test makes its own user and data, so tests run in parallel: two
  // workers, one per core of a small CI machine.
  fullyParallel: true,
  workers: Number(process.env.E2E_WORKERS) || 2,
  retries: 0,
  forbidOnly: process.env.AGENTS_CI === '1',
  // Generous: a busy 2-core machine runs two browsers, the server and the
  // model; the docker test sets its own.
  timeout: 90_000,
  expect: { timeout: 15_000 },
  use: {
    browserName: 'chromium',
    launchOptions: chromiumLaunch,
    viewport: { width: 1280, height: 820 },
    actionTimeout: 15_000,
    navigationTimeout: 15_000,
    trace: 'retain-on-failure',
    screenshot: { mode: 'only-on-failure', fullPage: true },
  },
  metadata: { chromium: missing ? `missing: ${missing}` : chromiumLaunch.executablePath },
})
