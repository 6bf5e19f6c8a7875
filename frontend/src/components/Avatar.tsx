import type { Agent } from '../lib/api'
import { at } from '../lib/base'

export const AVATARS = ['atom', 'bear', 'cat', 'compass', 'fox', 'lighthouse', 'octopus', 'owl', 'robot', 'rocket', 'spark', 'wizard']

/** An agent's picture from the built-in catalog, or its initial. */
export function Avatar({ agent, name, size = 28 }: { agent?: Pick<Agent, 'avatar' | 'name'>; name?: string; size?: number }) {
  const label = agent?.name ?? name ?? '?'
  if (agent?.avatar && /^\/avatars\/[a-z]+\.svg$/.test(agent.avatar))
    return <img className="avatar" src={at(agent.avatar)} alt="" width={size} height={size} />
  return (
    <span className="avatar avatar-initial" style={{ width: size, height: size, fontSize: size * 0.45 }} aria-hidden>
      {label.slice(0, 1).toUpperCase()}
    </span>
  )
}
