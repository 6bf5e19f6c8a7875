import { defineConfig } from 'vite'

// The API reference page (/docs) is built on its own, after the UI and into
// the same dist: its renderer (Scalar, a Vue app) then shares no chunk with
// the UI, whose bundle stays exactly what it was without it.
export default defineConfig({
  // Relative asset URLs, as the UI's (see vite.config.ts).
  base: './',
  build: {
    outDir: 'dist',
    emptyOutDir: false,
    sourcemap: false,
    // Scalar is one large app; it loads on /docs only.
    chunkSizeWarningLimit: 4000,
    rollupOptions: { input: 'docs.html' },
  },
})
