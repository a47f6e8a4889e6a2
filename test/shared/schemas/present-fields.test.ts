import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import * as z from 'zod/mini'
import { ChatCompletionRequestSchema } from '#shared/schemas/chat-completion'
import { presentFieldsCheck } from '#shared/schemas/present-fields'
import { ANY_VALUE } from '../../support/arbitraries.js'
import { nearValidChatBody } from '../../support/chat-arbitraries.js'

const chatFieldsValid = presentFieldsCheck(ChatCompletionRequestSchema)
// Requests arrive as JSON text, so properties hold for what JSON.parse gives back.
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value) ?? 'null')

describe('presentFieldsCheck', () => {
  it('agrees with the full parse on chat requests, and valid input equals what zod returns', () => {
    const seen = { valid: 0, invalid: 0 }
    fc.assert(
      fc.property(fc.oneof(nearValidChatBody('m', 6, 1), nearValidChatBody('m', 3, 0), ANY_VALUE), (generated) => {
        // Prepare
        const body = asJson(generated)

        // Act
        const fast = chatFieldsValid(body)
        const full = z.safeParse(ChatCompletionRequestSchema, body)

        // Assess
        expect(fast).toBe(full.success)
        if (full.success) expect(body).toEqual(full.data)
        seen[full.success ? 'valid' : 'invalid']++
      }),
      { numRuns: 600 },
    )
    // Both branches were exercised many times.
    expect(seen.valid).toBeGreaterThan(100)
    expect(seen.invalid).toBeGreaterThan(100)
  })

  it('accepts the common request shape and rejects a missing required field or a wrongly typed one', () => {
    // Prepare
    const valid = { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16, stream: true }

    // Act
    const verdicts = [
      chatFieldsValid(valid),
      chatFieldsValid({ model: 'm' }),
      chatFieldsValid({ ...valid, max_tokens: 1.5 }),
      chatFieldsValid({ ...valid, messages: [{ role: 'robot', content: 'hi' }] }),
      chatFieldsValid([valid]),
      chatFieldsValid(null),
    ]

    // Assess
    expect(verdicts).toEqual([true, false, false, false, false, false])
  })

  it('ignores unknown keys, including names of Object.prototype', () => {
    // Prepare
    const schema = z.looseObject({ name: z.string(), count: z.optional(z.number()) })
    const check = presentFieldsCheck(schema)
    const body = JSON.parse('{"name": "a", "__proto__": 1, "constructor": "x", "toString": [], "extra": {}}')

    // Act
    const verdict = check(body)

    // Assess
    expect(verdict).toBe(true)
    expect(z.safeParse(schema, body).success).toBe(true)
  })
})
