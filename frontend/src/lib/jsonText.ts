// JSON typed by a person: parsed as the form's value, or a message that
// says what is wrong and where, in the words a person reads (line and
// column, not a character offset).

export type ParsedJson = { ok: true; value: unknown } | { ok: false; error: string }

/** Parses text (empty means null); a failure names the line and column when the engine gives a position. */
export function parseJson(text: string): ParsedJson {
  try {
    return { ok: true, value: JSON.parse(text.trim() ? text : 'null') }
  } catch (e) {
    return { ok: false, error: describeJsonError(text, e instanceof Error ? e.message : String(e)) }
  }
}

/**
 * The engine's message without its offsets, led by "Line L, column C"
 * where the engine says where: V8 says "at position N" (newer ones add
 * "(line L column C)"), Firefox "at line L column C"; the end of the input
 * is where it ran out.
 */
export function describeJsonError(text: string, message: string): string {
  let where: { line: number; column: number } | undefined
  const pos = / at position (\d+)/.exec(message)
  const lc = /line (\d+) column (\d+)/.exec(message)
  if (lc) where = { line: Number(lc[1]), column: Number(lc[2]) }
  else if (pos) where = lineColumn(text, Number(pos[1]))
  else if (/end of (JSON )?(input|data)/i.test(message)) where = lineColumn(text, text.length)
  const what = message
    .replace(/^JSON\.parse: /, '')
    .replace(/ at line \d+ column \d+ of the JSON data$/, '')
    .replace(/ in JSON at position \d+/, '')
    .replace(/ \(line \d+ column \d+\)/, '')
    .trim()
  return where ? `Line ${where.line}, column ${where.column}: ${what}` : what
}

/** The 1-based line and column of a character offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset)
  const line = before.split('\n').length
  return { line, column: offset - before.lastIndexOf('\n') }
}
