// How a span ended: a stop's cancellation is not an error.
import { describe, expect, it } from 'vitest'
import { spanOutcome } from './waterfall'

describe('spanOutcome', () => {
  it('reads a span without an error as ok', () => {
    expect(spanOutcome({})).toBe('ok')
    expect(spanOutcome({ error: '' }, 'cancelled')).toBe('ok')
  })
  it('reads a cancelled call as cancelled, in either spelling', () => {
    expect(spanOutcome({ error: 'context canceled' })).toBe('cancelled')
    expect(spanOutcome({ error: 'Post "http://x/v1/responses": context canceled' }, 'completed')).toBe('cancelled')
    expect(spanOutcome({ error: 'run cancelled by the user' })).toBe('cancelled')
  })
  it('reads a context error of a cancelled run as cancelled', () => {
    expect(spanOutcome({ error: 'context deadline exceeded' }, 'cancelled')).toBe('cancelled')
    expect(spanOutcome({ error: 'context deadline exceeded' }, 'error')).toBe('error')
  })
  it('keeps real failures errors', () => {
    expect(spanOutcome({ error: 'upstream: 400 boom' })).toBe('error')
    expect(spanOutcome({ error: 'upstream: 400 boom' }, 'cancelled')).toBe('error')
  })
})
