// Records reducer fixtures from a running server and scripted model:
// each scenario's event stream (SSE) and the transcript it stored.
//   AGENTS_URL=http://127.0.0.1:9527 AGENTS_TOKEN=… SCRIPTED_URL=http://127.0.0.1:9528/v1 \
//     node scripts/capture-fixtures.mjs   (the scripted model started with --scripts e2e/scripts.json)
// CAPTURE=exec,todo picks scenarios (default: all but exec). exec runs
// exec_command in a project: the server needs a Docker daemon (DOCKER_HOST)
// holding SANDBOX_IMAGE (default agents-sandbox:test).
import { writeFileSync } from 'node:fs'

const base = process.env.AGENTS_URL
const token = process.env.AGENTS_TOKEN
const scripted = process.env.SCRIPTED_URL
const H = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }

async function call(method, path, body) {
  const res = await fetch(base + '/api/v1' + path, { method, headers: H, body: body && JSON.stringify(body) })
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
  return res.status === 204 ? null : res.json()
}

async function events(runId) {
  const res = await fetch(`${base}/api/v1/runs/${runId}/events`, { headers: H })
  const text = await res.text()
  return text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)))
}

const prov = await call('POST', '/providers', { name: 'fixtures-' + Date.now(), base_url: scripted, api_key: 'any' })
const agent = (extra) => call('POST', '/agents', { name: 'fx-' + Math.random().toString(36).slice(2, 8), provider_id: prov.id, ...extra })

const picked = process.env.CAPTURE ? new Set(process.env.CAPTURE.split(',')) : null
const want = (name) => (picked ? picked.has(name) : name !== 'exec')

async function scenario(name, agentId, input, projectId) {
  if (!want(name)) return
  const s = await call('POST', '/sessions', { agent_config_id: agentId })
  const run = await call('POST', `/sessions/${s.id}/runs`, { input, ...(projectId ? { project_id: projectId } : {}) })
  const evs = await events(run.run_id)
  const entries = await call('GET', `/sessions/${s.id}/messages?limit=200`)
  writeFileSync(new URL(`../src/timeline/fixtures/${name}.json`, import.meta.url), JSON.stringify({ events: evs, entries }, null, 1) + '\n')
  console.log(name, evs.length, 'events', entries.length, 'entries')
}

await scenario('todo', (await agent({ model: 'todo' })).id, 'make a plan')
await scenario('think', (await agent({ model: 'think' })).id, 'why is the sky blue?')
const reviewer = await agent({ model: 'reviewer', name: 'reviewer' })
await scenario('handoff', (await agent({ model: 'lead', handoffs: [reviewer.id] })).id, 'review my diff')
await scenario('unknown-tool', (await agent({ model: 'lead' })).id, 'call an unknown tool')

if (want('exec')) {
  const sb = await call('POST', '/sandboxes', { name: 'fixtures-' + Date.now(), type: 'docker', config: { image: process.env.SANDBOX_IMAGE || 'agents-sandbox:test', memory_mb: 512 } })
  const project = await call('POST', '/projects', { name: 'fixtures', sandbox_id: sb.id })
  await scenario('exec', (await agent({ model: 'sandbox' })).id, 'run it in the box', project.id)
}
