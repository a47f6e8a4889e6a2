import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { constraintFor } from '#shared/engine/structured'
import type { ChatCompletionRequest } from '#shared/schemas/chat-completion'
import { validateJson } from '../../support/json-schema.js'
import { ask, complete, text } from './support.js'

type Schema = Record<string, unknown>

const leaf: fc.Arbitrary<Schema> = fc.oneof(
  fc.constant({ type: 'boolean' }),
  fc.constant({ type: 'null' }),
  fc.constant({ type: 'number' }),
  fc.record({
    type: fc.constant('integer'),
    minimum: fc.integer({ min: -60, max: 0 }),
    maximum: fc.integer({ min: 0, max: 60 }),
  }),
  fc
    .tuple(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 8 }))
    .map(([min, extra]) => ({ type: 'string', minLength: min, maxLength: min + extra })),
  fc.record({ type: fc.constant('string'), pattern: fc.constantFrom('^[a-z]+$', '\\d{2}', '^(x|yz)*$', 'é') }),
  fc.record({
    enum: fc.uniqueArray(fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.boolean(), fc.constant(null)), {
      minLength: 1,
      maxLength: 4,
    }),
  }),
)

const { node } = fc.letrec<{ node: Schema; object: Schema; array: Schema; anyOf: Schema }>((tie) => ({
  node: fc.oneof({ depthSize: 'small', maxDepth: 3 }, leaf, tie('object'), tie('array'), tie('anyOf')),
  object: fc
    .tuple(
      fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), tie('node'), { maxKeys: 4 }),
      fc.boolean(),
      fc.integer(),
    )
    .map(([properties, closed, pick]) => {
      const names = Object.keys(properties)
      const required = names.filter((_, i) => ((pick >> i) & 1) === 1)
      return { type: 'object', properties, required, ...(closed ? { additionalProperties: false } : {}) }
    }),
  array: fc
    .tuple(tie('node'), fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 2 }))
    .map(([items, min, extra]) => ({ type: 'array', items, minItems: min, maxItems: min + extra })),
  anyOf: fc.array(tie('node'), { minLength: 1, maxLength: 3 }).map((anyOf) => ({ anyOf })),
}))

function request(schema: Schema, seed: number, budget: number): ChatCompletionRequest {
  return ask('Reply in JSON.', {
    response_format: { type: 'json_schema', json_schema: { name: 'fuzz', schema } },
    seed,
    max_completion_tokens: budget,
  })
}

describe('JSON Schema constrained decoding on generated schemas', () => {
  it('produces valid JSON whenever the budget leaves room for the shortest valid answer', async () => {
    await fc.assert(
      fc.asyncProperty(node, fc.integer(), fc.integer({ min: 0, max: 40 }), async (schema, seed, slack) => {
        // Prepare
        const shortest = constraintFor(request(schema, seed, 1))?.initial.dist ?? 0
        const budget = shortest + 1 + slack

        // Act
        const response = await complete(request(schema, seed, budget))

        // Assess
        const output = text(response)
        expect(response.choices[0]?.finish_reason, output).toBe('stop')
        expect(validateJson(JSON.parse(output), schema), output).toBeUndefined()
        expect(response.usage.completion_tokens).toBeLessThanOrEqual(budget)
      }),
      { numRuns: 150 },
    )
  })
})
