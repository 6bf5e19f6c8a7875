import { useState } from 'react'
import { Markdown } from '../../components/Markdown'
import type { ToolDisplay } from '../../timeline/model'

/**
 * The skill a read_skill result is about (its name and description), or
 * undefined for any other result. A stored result says display.kind skill,
 * a live one no kind: both carry extra.skill_id, which is what is read.
 */
export function skillOf(name: string, display: ToolDisplay | undefined): { modelName: string; description: string; id: string } | undefined {
  if (name !== 'read_skill' || !display?.extra?.skill_id) return undefined
  return { modelName: display.title ?? '', description: display.summary ?? '', id: display.extra?.skill_id ?? '' }
}

/** A SKILL.md without its frontmatter block (the card's head already shows its name and description). */
export function skillBody(content: string): string {
  const m = /^\uFEFF?---[ \t]*\r?\n[\s\S]*?\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/.exec(content)
  return m ? content.slice(m[0].length) : content
}

/**
 * What read_skill gave the model: the skill's instructions, folded under
 * a button so the conversation stays readable.
 */
export function SkillResult({ modelName, content }: { modelName: string; content: string }) {
  const [open, setOpen] = useState(false)
  return (
    <div className="skill-result">
      <button className="btn btn-ghost btn-xs" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
        {open ? 'Hide the document' : 'Show the document'}
      </button>
      {open && (
        <div className="skill-doc" role="document" aria-label={`SKILL.md of ${modelName}`}>
          <Markdown text={skillBody(content)} />
        </div>
      )}
    </div>
  )
}
