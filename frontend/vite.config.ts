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
      // KaTeX's CSS offers each font as woff2, woff and ttf; every browser
      // the app supports takes woff2, so the other two (0.9 MB) would only
      // weigh down the Go binary that embeds dist.
      name: 'katex-woff2-only',
      enforce: 'pre',
      transform(code, id) {
        if (!/[\\/]katex[\\/]dist[\\/]katex(\.min)?\.css$/.test(id)) return
        return code.replace(/,\s*url\([^)]*\.woff\)\s*format\(["']woff["']\)|,\s*url\([^)]*\.ttf\)\s*format\(["']truetype["']\)/g, '')
      },
    },
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
  build: {
    outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1500,
    // Fonts stay files: the app's CSP (font-src falls back to 'self') refuses
    // the data: URIs Vite would inline a small one as (a KaTeX font is 3.5 kB).
    assetsInlineLimit: (file) => (/\.(woff2?|ttf)$/.test(file) ? false : undefined),
  },
  // Unit tests run in Node; component tests (*.test.tsx) ask for jsdom with
  // a `@vitest-environment jsdom` comment.
  test: { include: ['src/**/*.test.{ts,tsx}'], environment: 'node', setupFiles: ['src/test/setup.ts'] },
})
