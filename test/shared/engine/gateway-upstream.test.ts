import '../../support/lambda-shim.js'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { app } from '#functions/inference/create-chat-completion/handler'
import { type ReferenceServer, startReferenceServer } from '#shared/engine/openai-server'
import { newCaller } from '../../support/auth.js'
import { validateJson } from '../../support/json-schema.js'
import { addUpstreamModel } from '../../support/models.js'

const SCHEMA = {
  type: 'object',
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 30 },
    year: { type: 'integer', minimum: 1900, maximum: 2030 },
    genres: { type: 'array', items: { enum: ['drama', 'comedy', 'documentary'] }, minItems: 1, maxItems: 2 },
    rating: { anyOf: [{ type: 'number' }, { type: 'null' }] },
  },
  required: ['title', 'year', 'genres', 'rating'],
  additionalProperties: false,
}

let upstream: ReferenceServer
let client: OpenAI
let model: string

beforeAll(async () => {
  upstream = await startReferenceServer()
  const caller = await newCaller()
  model = (
    await addUpstreamModel(upstream.baseUrl, [caller.entity], {
      backend: { kind: 'openai-compatible', baseUrl: upstream.baseUrl, upstreamModel: 'loom/reference-1' },
    })
  ).id
  // The SDK talks to the gateway app in-process; the gateway calls the reference server over real HTTP.
  client = new OpenAI({
    baseURL: 'http://gateway.test/v1',
    apiKey: caller.key,
    maxRetries: 0,
    fetch: async (url, init) => app.request(String(url), init),
  })
})

afterAll(async () => {
  await upstream.close()
})

describe('gateway with the reference engine as its upstream, through the openai SDK', () => {
  it('returns a json_schema completion that JSON.parse accepts and the schema validates', async () => {
    for (const seed of [1, 2, 3]) {
      // Act
      const completion = await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'Describe a film in JSON.' }],
        response_format: { type: 'json_schema', json_schema: { name: 'film', schema: SCHEMA, strict: true } },
        seed,
      })

      // Assess
      const value = JSON.parse(completion.choices[0]?.message.content ?? '')
      expect(validateJson(value, SCHEMA)).toBeUndefined()
      expect(completion.model).toBe(model)
    }
  })

  it('streams the constrained answer through the gateway SSE path', async () => {
    // Act
    // vLLM's extra fields travel in the body as they do from Python's `extra_body`.
    const body = {
      model,
      messages: [{ role: 'user' as const, content: 'Pick one.' }],
      structured_outputs: { choice: ['red', 'green', 'blue'] },
      stream: true as const,
      seed: 3,
    }
    const stream = await client.chat.completions.create(body)
    let content = ''
    const finishes: (string | null)[] = []
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? ''
      if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason)
    }

    // Assess
    expect(['red', 'green', 'blue']).toContain(content)
    expect(finishes).toEqual(['stop'])
  })
})
