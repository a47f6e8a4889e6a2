import { describe, expect, it } from 'vitest'
import { Cancellation } from '#shared/inference/cancellation'

describe('Cancellation', () => {
  it('calls each listener once, in order, on the first abort only', () => {
    // Prepare
    const cancellation = new Cancellation()
    const calls: string[] = []
    cancellation.onAbort(() => calls.push('a'))
    cancellation.onAbort(() => calls.push('b'))

    // Act
    cancellation.abort()
    cancellation.abort()

    // Assess
    expect(cancellation.aborted).toBe(true)
    expect(calls).toEqual(['a', 'b'])
  })

  it('does not call a listener that was unregistered', () => {
    // Prepare
    const cancellation = new Cancellation()
    const calls: string[] = []
    const stop = cancellation.onAbort(() => calls.push('removed'))
    cancellation.onAbort(() => calls.push('kept'))

    // Act
    stop()
    stop()
    cancellation.abort()

    // Assess
    expect(calls).toEqual(['kept'])
  })

  it('calls a listener added after the abort at once', () => {
    // Prepare
    const cancellation = new Cancellation()
    cancellation.abort()
    const calls: string[] = []

    // Act
    const stop = cancellation.onAbort(() => calls.push('late'))
    stop()

    // Assess
    expect(calls).toEqual(['late'])
  })
})
