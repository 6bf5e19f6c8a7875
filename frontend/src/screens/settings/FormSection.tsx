import type { ReactNode } from 'react'

/**
 * An advanced group of a form, folded until asked for. Its summary says
 * what is inside and how many of its fields the server refused; the form
 * opens it when it holds a field with an error (revealProblems). It stays
 * uncontrolled (no open prop), so a re-render never folds what the person
 * or revealProblems opened.
 */
export function FormSection({ title, about, problems = 0, group, children }: { title: string; about: string; problems?: number; group: string; children: ReactNode }) {
  return (
    <details className="card group form-section" data-group={group}>
      <summary>
        <span className="form-section-title">{title}</span>
        {problems > 0 && <> <span className="pill pill-error">{problems === 1 ? '1 problem' : `${problems} problems`}</span></>}
        <span className="form-section-about muted small">{about}</span>
      </summary>
      <div className="form-section-body">{children}</div>
    </details>
  )
}

/**
 * Opens every folded section that holds a refused field or a JSON text
 * that does not parse, and moves the focus to the first such control, so
 * a refusal is never hidden inside a closed section.
 */
export function revealProblems(root: HTMLElement | null) {
  if (!root) return
  const bad = Array.from(root.querySelectorAll<HTMLElement>('.has-error, [data-parse-error]'))
  for (const el of bad) {
    for (let d = el.closest('details'); d; d = d.parentElement?.closest('details') ?? null) d.open = true
  }
  const first = bad[0]
  const control = first?.matches('input, select, textarea') ? first : first?.querySelector<HTMLElement>('input, select, textarea, [tabindex]')
  control?.focus({ preventScroll: false })
}
