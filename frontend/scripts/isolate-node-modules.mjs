// Some npm packages ship Go files (flatted does). A go.mod inside
// node_modules makes it a module of its own, so the server's `go build`,
// `go vet ./...` and `go test ./...` never see them.
import { existsSync, writeFileSync } from 'node:fs'

const dir = new URL('../node_modules/', import.meta.url)
if (existsSync(dir)) writeFileSync(new URL('go.mod', dir), 'module node_modules_ignored\n\ngo 1.22\n')
