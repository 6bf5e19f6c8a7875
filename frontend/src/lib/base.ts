// Where the app is served from. At the root for the agents-server command;
// under a prefix (say /agents) when a Go program mounts the workbench in
// its own server. The server writes the prefix into the page, with a
// <base> the built assets resolve against:
//   <meta name="agents-base" content="/agents">
// and, when the host program signs people in itself,
//   <meta name="agents-auth" content="host">

function meta(name: string): string | null {
  if (typeof document === 'undefined') return null
  return document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') ?? null
}

/** The mount prefix: "" at the root, else "/agents" (no trailing slash). */
export const BASE = (meta('agents-base') ?? '').replace(/\/+$/, '')

/** Whether the host program's sign-in admits this page's requests (no token). */
export const HOST_SIGN_IN = meta('agents-auth') === 'host'

/** A server path ("/api/v1/…", "/ws") under the mount. */
export const at = (path: string): string => BASE + path

/** The WebSocket URL of a server path under the mount, on this origin. */
export function socketURL(path: string, loc: Pick<Location, 'protocol' | 'host'> = location): string {
  return `${loc.protocol === 'https:' ? 'wss:' : 'ws:'}//${loc.host}${at(path)}`
}
