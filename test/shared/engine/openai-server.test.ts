import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ReferenceServer, startReferenceServer } from '#shared/engine/openai-server'
import { validateJson } from '../../support/json-schema.js'

const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 20 },
    age: { type: 'integer', minimum: 18, maximum: 99 },
    languages: { type: 'array', items: { type: 'string', enum: ['en', 'fr', 'de'] }, minItems: 1, maxItems: 3 },
  },
  required: ['name', 'age', 'languages'],
  additionalProperties: false,
}

let server: ReferenceServer
let client: OpenAI

beforeAll(async () => {
  server = await startReferenceServer()
  client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'unused', maxRetries: 0 })
})

afterAll(async () => {
  await server.close()
})

describe('reference engine through the openai SDK', () => {
  it('returns a json_schema completion that parses and validates', async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      // Act
      const completion = await client.chat.completions.create({
        model: 'loom/reference-1',
        messages: [{ role: 'user', content: 'Describe a person in JSON.' }],
        response_format: { type: 'json_schema', json_schema: { name: 'person', schema: SCHEMA, strict: true } },
        seed,
      })

      // Assess
      const value = JSON.parse(completion.choices[0]?.message.content ?? '')
      expect(validateJson(value, SCHEMA)).toBeUndefined()
      expect(completion.choices[0]?.finish_reason).toBe('stop')
    }
  })

  it('streams token by token with a usage chunk when asked', async () => {
    // Act
    const stream = await client.chat.completions.create({
      model: 'loom/reference-1',
      messages: [{ role: 'user', content: 'Tell me a short story.' }],
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 30,
      seed: 7,
    })
    const deltas: string[] = []
    let usage: OpenAI.CompletionUsage | null | undefined
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) deltas.push(chunk.choices[0].delta.content)
      if (chunk.usage) usage = chunk.usage
    }

    // Assess
    expect(deltas.length).toBeGreaterThan(10)
    expect(usage?.completion_tokens).toBe(30)
  })

  it('keeps reasoning token details on every continuous usage chunk', async () => {
    // Act
    const stream = await client.chat.completions.create({
      model: 'loom/reference-1',
      messages: [{ role: 'user', content: 'Why is the sky blue?' }],
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
      reasoning_effort: 'low',
      max_completion_tokens: 40,
      seed: 1,
    } as OpenAI.ChatCompletionCreateParamsStreaming)
    const usages: (OpenAI.CompletionUsage | null | undefined)[] = []
    for await (const chunk of stream) usages.push(chunk.usage)

    // Assess
    expect(usages.length).toBeGreaterThan(2)
    for (const usage of usages) expect(usage?.completion_tokens_details?.reasoning_tokens).toEqual(expect.any(Number))
    expect(usages.at(-2)?.completion_tokens_details).toEqual(usages.at(-1)?.completion_tokens_details)
  })

  it('lists the model and maps engine errors to the contract error body', async () => {
    // Act
    const models = await client.models.list()
    const error = await client.chat.completions
      .create({ model: 'loom/reference-1', messages: [{ role: 'user', content: 'x' }], logit_bias: { '9999': 1 } })
      .catch((e: unknown) => e)

    // Assess
    expect(models.data.map((m) => m.id)).toEqual(['loom/reference-1'])
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      type: 'BadRequestError',
      param: 'logit_bias',
      code: 400,
    })
  })
})
