// A protected MCP endpoint naming an authorization server: it answers
// every call 401 with where to sign in, and takes no token. The OAuth
// browser tests need only the sign-in it starts, not a connection.
import http from 'node:http'
import type { AddressInfo } from 'node:net'

/** Starts the endpoint on a free port; endpoint is its /mcp URL. */
export async function startProtectedStub(authServerURL: string): Promise<{ endpoint: string; close: () => Promise<void> }> {
  const rs = http.createServer((req, res) => {
    const base = `http://127.0.0.1:${(rs.address() as AddressInfo).port}`
    if (req.url?.startsWith('/.well-known/oauth-protected-resource')) {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ resource: `${base}/mcp`, authorization_servers: [authServerURL] }))
      return
    }
    res.writeHead(401, { 'WWW-Authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"` }).end('sign in')
  })
  await new Promise<void>((r) => rs.listen(0, '127.0.0.1', r))
  return {
    endpoint: `http://127.0.0.1:${(rs.address() as AddressInfo).port}/mcp`,
    close: () => new Promise<void>((r) => rs.close(() => r())),
  }
}
