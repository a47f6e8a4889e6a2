import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import * as z from 'zod/mini'
import { parseChatRequest } from '#shared/inference/validate-request'
import { ChatCompletionRequestSchema } from '#shared/schemas/chat-completion'
import { presentFieldsParse } from '#shared/schemas/present-fields'
import { ANY_VALUE } from '../../support/arbitraries.js'
import { nearValidChatBody } from '../../support/chat-arbitraries.js'

const parseChatFields = presentFieldsParse(ChatCompletionRequestSchema)
// Requests arrive as JSON text, so properties hold for what JSON.parse gives back.
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value) ?? 'null')

// Bodies with an own `__proto__` key (JSON.parse makes one), at the top and nested: a random run once found the first
// kept by the field-by-field path and dropped by zod. Fixed cases, so they run whatever the seed.
const PROTO_BODIES = [
  '{"model":"m","messages":[{"role":"user","content":"hi"}],"__proto__":{"stream":true}}',
  '{"model":"m","messages":[{"role":"user","content":"hi","__proto__":1}]}',
  '{"model":"m","messages":[{"role":"user","content":"hi"}],"logit_bias":{"__proto__":1}}',
  '{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"__proto__":{}}}}}',
]

describe('presentFieldsParse', () => {
  it('agrees with the full parse on chat requests: the same verdict, and for valid input the same value', () => {
    const seen = { valid: 0, invalid: 0 }
    fc.assert(
      fc.property(fc.oneof(nearValidChatBody('m', 6, 1), nearValidChatBody('m', 3, 0), ANY_VALUE), (generated) => {
        // Prepare
        const body = asJson(generated)

        // Act
        const fast = parseChatFields(body)
        const full = z.safeParse(ChatCompletionRequestSchema, body)

        // Assess
        expect(fast !== undefined).toBe(full.success)
        if (full.success) expect(fast).toEqual(full.data)
        seen[full.success ? 'valid' : 'invalid']++
      }),
      { numRuns: 600 },
    )
    // Both branches were exercised many times.
    expect(seen.valid).toBeGreaterThan(100)
    expect(seen.invalid).toBeGreaterThan(100)
  })

  it('leaves out an own __proto__ key at every depth, as the full parse does', () => {
    for (const text of PROTO_BODIES) {
      // Prepare
      const body = JSON.parse(text) as Record<string, unknown>

      // Act
      const fast = parseChatFields(body)
      const full = z.safeParse(ChatCompletionRequestSchema, body)
      const request = parseChatRequest(JSON.parse(text))

      // Assess: the same value, no `__proto__` left anywhere, the prototype untouched, nothing of it inherited.
      expect(full.success).toBe(true)
      expect(fast).toEqual(full.data)
      expect(JSON.stringify(fast)).not.toContain('__proto__')
      expect(JSON.stringify(request)).not.toContain('__proto__')
      expect(Object.getPrototypeOf(fast)).toBe(Object.prototype)
      expect(request.stream).toBeUndefined()
    }
  })

  it('accepts the common request shape and rejects a missing required field or a wrongly typed one', () => {
    // Prepare
    const valid = { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16, stream: true }

    // Act
    const parsed = [
      parseChatFields(valid),
      parseChatFields({ model: 'm' }),
      parseChatFields({ ...valid, max_tokens: 1.5 }),
      parseChatFields({ ...valid, messages: [{ role: 7, content: 'hi' }] }),
      parseChatFields([valid]),
      parseChatFields(null),
    ]

    // Assess
    expect(parsed).toEqual([valid, undefined, undefined, undefined, undefined, undefined])
  })

  it('keeps unknown keys, names of Object.prototype included, and leaves out __proto__ as zod does', () => {
    // Prepare
    const schema = z.looseObject({ name: z.string(), count: z.optional(z.number()) })
    const parse = presentFieldsParse(schema)
    const body = JSON.parse('{"name": "a", "__proto__": 1, "constructor": "x", "toString": [], "extra": {}}')

    // Act
    const parsed = parse(body)
    const full = z.safeParse(schema, body)

    // Assess
    expect(parsed).toEqual({ name: 'a', constructor: 'x', toString: [], extra: {} })
    expect(Object.hasOwn(parsed ?? {}, '__proto__')).toBe(false)
    expect(full.success).toBe(true)
    expect(parsed).toEqual(full.data)
  })
})
