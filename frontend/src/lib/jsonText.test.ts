// JSON fields report what is wrong and where, whatever the engine's wording.
import { describe, expect, it } from 'vitest'
import { describeJsonError, lineColumn, parseJson } from './jsonText'

describe('parseJson', () => {
  it('parses, and reads empty text as null', () => {
    expect(parseJson('{"a": [1]}')).toEqual({ ok: true, value: { a: [1] } })
    expect(parseJson('  \n')).toEqual({ ok: true, value: null })
  })

  it('names the line and column of a mistake', () => {
    const r = parseJson('{\n  "a": 1,\n  }')
    expect(r.ok).toBe(false)
    // Whatever this engine says, the place is computed or read from it.
    if (!r.ok) expect(r.error).toMatch(/^Line 3, column 3: \S/)
  })

  it('puts a text that stops short at its end', () => {
    const r = parseJson('{"type": "object",')
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.error).toMatch(/^Line 1, column 19: /)
  })
})

describe('describeJsonError', () => {
  const text = '{\n  "a" 1\n}'
  it('reads V8 offsets, old and new', () => {
    expect(describeJsonError(text, "Expected ':' after property name in JSON at position 8")).toBe("Line 2, column 7: Expected ':' after property name")
    expect(describeJsonError(text, "Expected ':' after property name in JSON at position 8 (line 2 column 7)")).toBe("Line 2, column 7: Expected ':' after property name")
  })

  it("reads Firefox's line and column", () => {
    expect(describeJsonError(text, "JSON.parse: expected ':' after property name in object at line 2 column 7 of the JSON data"))
      .toBe("Line 2, column 7: expected ':' after property name in object")
  })

  it('keeps a message that says nowhere as it is', () => {
    expect(describeJsonError('nope', 'Unexpected token \'o\', "nope" is not valid JSON')).toBe('Unexpected token \'o\', "nope" is not valid JSON')
  })
})

describe('lineColumn', () => {
  it('counts from 1', () => {
    expect(lineColumn('ab\ncd', 0)).toEqual({ line: 1, column: 1 })
    expect(lineColumn('ab\ncd', 4)).toEqual({ line: 2, column: 2 })
  })
})
