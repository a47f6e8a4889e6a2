import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { type ServerType, serve } from '@hono/node-server'
import OpenAI from 'openai'
import { zodResponseFormat } from 'openai/helpers/zod'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { putModel } from '#shared/db/model-repository'
import { referenceCatalogModel } from '#shared/engine/settings'
import { clearCatalogCache } from '#shared/inference/catalog'
import { createLocalApp } from '../../scripts/local/app.js'
import { newCaller, type TestCaller } from '../support/auth.js'
import { addUpstreamModel } from '../support/models.js'
import { startVllmUpstream, type VllmUpstream } from '../support/vllm-upstream.js'

// The vLLM behaviours real clients hit (issue 18), through the official openai SDK against the local stack: the
// reference engine for what it serves itself, a loopback vLLM-protocol upstream for what the gateway forwards.

let upstream: VllmUpstream
let server: ServerType
let caller: TestCaller
let reference: string
let forwarded: string
let client: OpenAI

beforeAll(async () => {
  upstream = await startVllmUpstream()
  caller = await newCaller()
  reference = `test-org/reference-${randomUUID().slice(0, 8)}`
  await putModel(referenceCatalogModel({ id: reference, root: reference, entities: [caller.entity] }))
  clearCatalogCache()
  forwarded = (await addUpstreamModel(upstream.baseUrl, [caller.entity])).id
  const app = await createLocalApp()
  server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s))
  })
  const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  client = new OpenAI({ apiKey: caller.key, baseURL, maxRetries: 0 })
})

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
  await upstream.close()
})

const ask = (content: string) => [{ role: 'user' as const, content }]

// What `zodResponseFormat` writes for common zod types (the helper refuses `.optional()` alone, records and tuples).
const ZOD_MATRIX: [string, z.ZodType][] = [
  ['int', z.object({ n: z.number().int() })],
  ['non-negative int', z.object({ n: z.number().int().nonnegative() })],
  ['bounded number', z.object({ n: z.number().min(0).max(10) })],
  ['bounded int', z.object({ n: z.number().int().min(1).max(5) })],
  ['exclusive bounds', z.object({ n: z.number().gt(1).lt(5), p: z.number().positive() })],
  ['plain number and boolean', z.object({ n: z.number(), b: z.boolean() })],
  ['enum and literal', z.object({ c: z.enum(['red', 'green', 'blue']), k: z.literal('fixed') })],
  [
    'nullable and optional-nullable',
    z.object({ s: z.string().nullable(), o: z.string().optional().nullable(), i: z.number().int().nullable() }),
  ],
  ['union', z.object({ u: z.union([z.string(), z.number()]) })],
  [
    'discriminated union',
    z.object({
      d: z.discriminatedUnion('kind', [
        z.object({ kind: z.literal('a'), x: z.string() }),
        z.object({ kind: z.literal('b'), y: z.boolean() }),
      ]),
    }),
  ],
  [
    'nested arrays and objects',
    z.object({
      items: z
        .array(z.object({ name: z.string().max(12), tags: z.array(z.string().max(8)).max(3) }))
        .min(1)
        .max(3),
      meta: z.object({ count: z.number().int(), owner: z.object({ id: z.string().max(10) }) }),
    }),
  ],
  [
    'recursive',
    (() => {
      const Node: z.ZodType = z.object({
        v: z.number().int().min(0).max(9),
        get children() {
          return z.array(Node).max(2)
        },
      })
      return z.object({ root: Node })
    })(),
  ],
  ['string length and regex', z.object({ s: z.string().min(2).max(5), r: z.string().regex(/^[a-z]+$/) })],
  ['email and uuid', z.object({ e: z.email(), u: z.uuid() })],
  ['date, date-time and time', z.object({ d: z.iso.date(), dt: z.iso.datetime(), t: z.iso.time() })],
  ['url and starts-with', z.object({ url: z.url(), s: z.string().startsWith('ab') })],
  ['described and defaulted', z.object({ n: z.number().default(3).describe('a count'), s: z.string().describe('x') })],
]

describe('the openai SDK zod helper with the reference engine', () => {
  it.each(ZOD_MATRIX)('parses %s', async (name, schema) => {
    // Act
    const completion = await client.chat.completions.parse({
      model: reference,
      messages: ask(`Answer as JSON: ${name}`),
      response_format: zodResponseFormat(schema, name.replaceAll(/[^a-z]/g, '_')),
      max_completion_tokens: 400,
      seed: 1,
    })

    // Assess
    const choice = completion.choices[0]
    expect(choice?.finish_reason).toBe('stop')
    expect(choice?.message.parsed).not.toBeNull()
    expect(schema.safeParse(JSON.parse(choice?.message.content ?? '')).success).toBe(true)
  })
})

describe('custom message roles through the openai SDK', () => {
  // vLLM's `CustomChatCompletionMessageParam`: any role string; the SDK's types name only OpenAI's roles.
  const withToolOutput = [
    { role: 'user', content: 'What is 2+2?' },
    { role: 'ipython', content: '4' },
  ] as unknown as OpenAI.Chat.ChatCompletionMessageParam[]

  it('sends an ipython turn to the reference engine', async () => {
    // Act
    const completion = await client.chat.completions.create({
      model: reference,
      messages: withToolOutput,
      max_completion_tokens: 8,
    })

    // Assess
    expect(completion.choices[0]?.message.role).toBe('assistant')
    expect(completion.usage?.prompt_tokens).toBeGreaterThan(0)
  })

  it('forwards an ipython turn to an upstream model as sent', async () => {
    // Prepare
    const before = upstream.seen.length

    // Act
    const completion = await client.chat.completions.create({ model: forwarded, messages: withToolOutput })

    // Assess
    expect(completion.choices[0]?.message.content).toBe('4')
    expect(upstream.seen[before]?.body.messages).toEqual(withToolOutput)
  })
})

describe('chat-layer refusals through the openai SDK', () => {
  it('answers an image for the text-only reference engine with a BadRequestError naming the model', async () => {
    // Act
    const act = client.chat.completions.create({
      model: reference,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
      ],
    })

    // Assess
    await expect(act).rejects.toBeInstanceOf(OpenAI.BadRequestError)
    await expect(act).rejects.toMatchObject({ status: 400, message: `400 ${reference} is not a multimodal model` })
  })

  it('refuses continue_final_message unless add_generation_prompt is false', async () => {
    // Prepare
    const messages = [
      { role: 'user' as const, content: 'Tell me a story.' },
      { role: 'assistant' as const, content: 'Once upon a time' },
    ]
    const prefill = { continue_final_message: true } as object

    // Act
    const continued = await client.chat.completions.create({
      model: reference,
      messages,
      max_completion_tokens: 4,
      ...prefill,
      ...({ add_generation_prompt: false } as object),
    })
    const refused = await client.chat.completions.create({ model: reference, messages, ...prefill }).catch((e) => e)

    // Assess
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError)
    expect(refused.message).toContain('continue_final_message and add_generation_prompt are not compatible')
    expect(continued.choices[0]?.finish_reason).toMatch(/^(stop|length)$/)
  })
})

describe('GET /v1/models through the openai SDK', () => {
  it("reports the reference engine's enforced context window, the number in its length refusal", async () => {
    // Act
    const listed = (await client.models.list()).data.find((m) => m.id === reference) as
      | (OpenAI.Models.Model & { max_model_len?: number | null })
      | undefined
    const refused = await client.chat.completions
      .create({ model: reference, messages: ask('Hi'), max_completion_tokens: listed?.max_model_len ?? 0 })
      .catch((e: unknown) => e)

    // Assess
    expect(listed?.max_model_len).toBe(8192)
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError)
    expect((refused as Error).message).toContain("the model's context length is only 8192 tokens")
  })
})

describe('structural_tag response formats through the openai SDK', () => {
  const format = {
    type: 'triggered_tags',
    triggers: ['<function='],
    tags: [
      {
        begin: '<function=weather>',
        content: {
          type: 'json_schema',
          json_schema: { type: 'object', properties: { city: { type: 'string', maxLength: 10 } }, required: ['city'] },
        },
        end: '</function>',
      },
    ],
    at_least_one: true,
    stop_after_first: true,
  }
  // The SDK's types name OpenAI's response formats only; vLLM's structural tag goes through as JSON.
  const responseFormat = { type: 'structural_tag', format } as unknown as OpenAI.ResponseFormatText

  it('makes the reference engine write the tag: begin, JSON for its schema, end', async () => {
    // Act
    const completion = await client.chat.completions.create({
      model: reference,
      messages: ask('Weather in Oslo?'),
      response_format: responseFormat,
      max_completion_tokens: 80,
      seed: 2,
    })

    // Assess
    const content = completion.choices[0]?.message.content ?? ''
    const call = /^<function=weather>(.*)<\/function>$/s.exec(content)
    expect(completion.choices[0]?.finish_reason).toBe('stop')
    expect(typeof JSON.parse(call?.[1] ?? 'null').city).toBe('string')
  })

  it('forwards the structural tag to an upstream model as sent', async () => {
    // Prepare
    const before = upstream.seen.length

    // Act
    await client.chat.completions.create({ model: forwarded, messages: ask('hi'), response_format: responseFormat })

    // Assess
    expect(upstream.seen[before]?.body.response_format).toEqual({ type: 'structural_tag', format })
  })
})
