// A local OAuth 2.0 authorization server for the MCP OAuth integration
// tests. oauth2-mock-server does the protocol: /authorize redirects back at
// once with a code (no login page, so a test can follow it with an HTTP
// client), /token checks PKCE and issues signed JWTs and a fresh refresh
// token on every grant. This file adds what an MCP client needs beyond it
// and what the tests steer:
//   - RFC 8414 metadata at /.well-known/oauth-authorization-server, with a
//     registration endpoint and the refresh grant;
//   - RFC 7591 dynamic client registration at POST /register;
//   - refresh tokens that can be revoked (invalid_grant), a settable
//     expires_in, and an optional RFC 9207 iss on the redirect;
//   - a unique jti in every access token;
//   - GET /_test/state (what happened) and POST /_test/{revoke,expires,iss}.
// PORT picks the port.
import http from 'node:http'
import { randomUUID } from 'node:crypto'
import { OAuth2Server } from 'oauth2-mock-server'

const port = Number(process.env.PORT)
const base = `http://127.0.0.1:${port}`
const mock = new OAuth2Server()
await mock.issuer.keys.generate('RS256')
mock.issuer.url = base

const state = {
  registrations: [], // bodies of POST /register, with the client_id given
  codeGrants: 0,
  refreshGrants: 0,
  refusedRefreshes: 0,
  revoked: false, // every refresh token issued so far is refused
  revokedTokens: new Set(),
  issued: [],
  expiresIn: 3600,
  iss: false, // add iss to the authorize redirect
  advertiseIss: false, // say so in the metadata
}

mock.service.on('beforeResponse', (resp, req) => {
  const grant = req.body.grant_type
  if (grant === 'refresh_token') {
    state.refreshGrants++
    if (state.revokedTokens.has(req.body.refresh_token)) {
      state.refusedRefreshes++
      resp.statusCode = 400
      resp.body = { error: 'invalid_grant', error_description: 'the refresh token was revoked' }
      return
    }
  }
  if (grant === 'authorization_code') state.codeGrants++
  if (resp.statusCode === 200 && resp.body.refresh_token) {
    state.issued.push(resp.body.refresh_token)
    resp.body.expires_in = state.expiresIn
  }
})

// Every token is its own (a jti), so a test can tell whose token a call
// carried even when two are issued in the same second for the same claims.
mock.service.on('beforeTokenSigning', (token) => {
  token.payload.jti = randomUUID()
})

mock.service.on('beforeAuthorizeRedirect', (redirect) => {
  if (state.iss) redirect.url.searchParams.set('iss', base)
})

function metadata() {
  return {
    issuer: base,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    registration_endpoint: `${base}/register`,
    jwks_uri: `${base}/jwks`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    scopes_supported: ['mcp', 'offline_access'],
    ...(state.advertiseIss ? { authorization_response_iss_parameter_supported: true } : {}),
  }
}

function readJSON(req) {
  return new Promise((resolve, reject) => {
    let raw = ''
    req.on('data', (c) => { raw += c })
    req.on('end', () => { try { resolve(raw ? JSON.parse(raw) : {}) } catch (e) { reject(e) } })
  })
}

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
  res.end(JSON.stringify(body))
}

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, base)
  try {
    switch (`${req.method} ${url.pathname}`) {
      case 'GET /.well-known/oauth-authorization-server':
        return send(res, 200, metadata())
      case 'POST /register': {
        const body = await readJSON(req)
        if (!Array.isArray(body.redirect_uris) || body.redirect_uris.length === 0) {
          return send(res, 400, { error: 'invalid_redirect_uri', error_description: 'redirect_uris is required' })
        }
        const client = { ...body, client_id: `dcr-${randomUUID()}`, client_id_issued_at: Math.floor(Date.now() / 1000), token_endpoint_auth_method: 'none' }
        state.registrations.push(client)
        return send(res, 201, client)
      }
      case 'GET /_test/state':
        return send(res, 200, { ...state, revokedTokens: [...state.revokedTokens], issued: state.issued.length })
      case 'POST /_test/revoke':
        for (const t of state.issued) state.revokedTokens.add(t)
        return send(res, 200, { revoked: state.revokedTokens.size })
      case 'POST /_test/expires':
        state.expiresIn = Number(url.searchParams.get('seconds'))
        return send(res, 200, { expires_in: state.expiresIn })
      case 'POST /_test/iss':
        state.iss = url.searchParams.get('send') === '1'
        state.advertiseIss = url.searchParams.get('advertise') === '1'
        return send(res, 200, { iss: state.iss, advertise: state.advertiseIss })
    }
  } catch (e) {
    return send(res, 400, { error: 'invalid_request', error_description: String(e) })
  }
  mock.service.requestHandler(req, res)
})

server.listen(port, '127.0.0.1', () => console.log(`authorization server on ${base}`))
