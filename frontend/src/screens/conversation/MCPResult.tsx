import type { ToolDisplay } from '../../timeline/model'

/** One part of an MCP tool's result, as the card keeps it (images and audio as base64). */
export interface MCPPart { type: string; text?: string; mime_type?: string; data?: string; uri?: string; name?: string }

/** An MCP tool call's result as its display carries it: the server, its name for the tool, every part, and the structured content. */
export interface MCPCall { server: string; tool: string; parts: MCPPart[]; structured?: string }

/** The MCP call a tool result's display describes; undefined for any other tool. */
export function mcpCallOf(display: ToolDisplay | undefined): MCPCall | undefined {
  const x = display?.extra
  if (!x?.server) return undefined
  return { server: x.server, tool: x.tool ?? '', parts: partsOf(x.content), structured: x.structured || undefined }
}

function partsOf(json: string | undefined): MCPPart[] {
  if (!json) return []
  try {
    const v: unknown = JSON.parse(json)
    return Array.isArray(v) ? v.filter((p): p is MCPPart => !!p && typeof p === 'object' && typeof (p as MCPPart).type === 'string') : []
  } catch {
    return []
  }
}

/** A MIME type safe to put in a data: URL of the given kind (image/png, audio/wav…). */
const mimeOf = (kind: 'image' | 'audio', mime: string | undefined) => (mime && new RegExp(`^${kind}/[\\w.+-]+$`).test(mime) ? mime : undefined)

const sizeOf = (base64: string) => {
  const bytes = Math.floor((base64.length * 3) / 4)
  return bytes < 1024 ? `${bytes} B` : `${Math.round(bytes / 1024)} KB`
}

/** What an MCP tool answered: its text, images, audio and resources, in order; the output alone when it kept no parts (a call that got no answer). */
export function MCPResult({ call, output, isError }: { call: MCPCall; output: string; isError?: boolean }) {
  const label = `${call.server} · ${call.tool}`
  return (
    <div className={`mcp-result${isError ? ' mcp-error' : ''}`} role="group" aria-label={`Result of ${label}`}>
      {call.parts.length === 0 && output && <pre className="mcp-text" tabIndex={0}>{output}</pre>}
      {call.parts.map((p, i) => <Part key={i} part={p} label={label} />)}
    </div>
  )
}

function Part({ part: p, label }: { part: MCPPart; label: string }) {
  switch (p.type) {
    case 'text':
      return <pre className="mcp-text" tabIndex={0}>{p.text}</pre>
    case 'image': {
      const mime = mimeOf('image', p.mime_type)
      if (!p.data || !mime) return <p className="muted small">Image{p.mime_type ? ` (${p.mime_type})` : ''} {p.text ?? 'not kept'}</p>
      return <img className="mcp-image" src={`data:${mime};base64,${p.data}`} alt={p.name || `Image from ${label}`} />
    }
    case 'audio': {
      // A download rather than a player: the page's content policy plays no data: media.
      const mime = mimeOf('audio', p.mime_type)
      if (!p.data || !mime) return <p className="muted small">Audio{p.mime_type ? ` (${p.mime_type})` : ''} {p.text ?? 'not kept'}</p>
      return <a className="small" href={`data:${mime};base64,${p.data}`} download={p.name || 'audio'}>Download audio ({mime}, {sizeOf(p.data)})</a>
    }
    case 'resource':
    case 'resource_link':
      return (
        <div className="mcp-resource">
          <span>
            <span className="muted">{p.type === 'resource' ? 'Resource' : 'Link'}: </span>
            {p.uri && /^https?:\/\//i.test(p.uri) ? <a href={p.uri} target="_blank" rel="noopener noreferrer">{p.name || p.uri}</a> : <code>{p.uri}</code>}
            {p.name && p.uri && !/^https?:\/\//i.test(p.uri) && <span className="muted"> {p.name}</span>}
          </span>
          {p.text && <pre className="mcp-text" tabIndex={0}>{p.text}</pre>}
        </div>
      )
    default:
      return p.text ? <pre className="mcp-text" tabIndex={0}>{p.text}</pre> : <p className="muted small">A {p.type} part</p>
  }
}
