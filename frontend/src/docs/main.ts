// The /docs page: the served OpenAPI document rendered by Scalar, bundled
// here so the page needs nothing from outside the server. Everything that
// would reach elsewhere is off: the CDN fonts, telemetry, the request
// client (its requests go through Scalar's proxy by default), the AI agent
// and MCP panels.
import '@scalar/api-reference/style.css'
import { config } from 'zod'
import { at } from '../lib/base'

// Zod, which Scalar validates with, probes once whether it may compile
// validators with Function(""). The /docs policy allows no eval, so the
// probe would be a logged CSP violation; jitless skips it (Zod then
// interprets, as the policy would make it do anyway). Scalar is imported
// only after the setting: a static import would run its modules — and the
// probe — first.
config({ jitless: true })

const { createApiReference } = await import('@scalar/api-reference')
createApiReference('#docs', {
  url: at('/api/v1/openapi.yaml'),
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  hideTestRequestButton: true,
  showDeveloperTools: 'never',
  // Operation ids are what generated clients call the operations.
  showOperationId: true,
  mcp: { disabled: true },
  agent: { disabled: true },
})
