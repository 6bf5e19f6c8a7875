import { defineConfig } from 'vite'
import { redocStandalone } from './vite.redoc.ts'

// The API reference page (/docs) is built on its own, after the UI and into
// the same dist: its renderer (Redoc's standalone bundle, see vite.redoc.ts)
// then shares nothing with the UI, whose bundle stays exactly what it was
// without it.
export default defineConfig({
  plugins: [redocStandalone()],
  // Relative asset URLs, as the UI's (see vite.config.ts).
  base: './',
  build: {
    outDir: 'dist',
    emptyOutDir: false,
    sourcemap: false,
    rollupOptions: { input: 'docs.html' },
  },
})
