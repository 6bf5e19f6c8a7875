import { writeFileSync } from 'node:fs'
import { defineConfig } from 'vitest/config'
import react from '@vitejs/plugin-react'
import { redocStandalone } from './vite.redoc.ts'

// The dev server proxies the API and the event bus to a locally running
// agents-server (go tool task run), so `npm run dev` is the whole UI loop.
const backend = process.env.AGENTS_BACKEND ?? 'http://127.0.0.1:9527'

export default defineConfig({
  plugins: [
    react(),
    // Only for docs.html under the dev server; the build of /docs is
    // vite.docs.config.ts.
    redocStandalone(),
    {
      // vite empties dist on every build; the placeholder keeps the folder
      // (and so the Go embed) present in a fresh clone.
      name: 'keep-dist-placeholder',
      closeBundle() {
        writeFileSync(new URL('./dist/.gitkeep', import.meta.url), '')
      },
    },
  ],
  server: {
    proxy: {
      '/api': { target: backend, changeOrigin: false },
      '/ws': { target: backend.replace(/^http/, 'ws'), ws: true },
    },
  },
  // Relative asset URLs: the server writes a <base> into the page, so the
  // same build works at the root and under a host program's mount prefix.
  base: './',
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1500 },
  // Unit tests run in Node; component tests (*.test.tsx) ask for jsdom with
  // a `@vitest-environment jsdom` comment.
  test: { include: ['src/**/*.test.{ts,tsx}'], environment: 'node', setupFiles: ['src/test/setup.ts'] },
})
