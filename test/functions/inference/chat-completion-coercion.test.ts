import '../../support/lambda-shim.js'
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { app } from '#functions/inference/create-chat-completion/handler'
import { putModel } from '#shared/db/model-repository'
import { referenceCatalogModel } from '#shared/engine/settings'
import { clearCatalogCache } from '#shared/inference/catalog'
import { jsonInit } from '../../support/auth.js'
import { upstreamModelFixture } from '../../support/models.js'
import { sseChunks } from '../../support/sse.js'

// vLLM's request models are pydantic models in lax mode: "0.5" is a float, "5" an int, 1 and "true" booleans. The
// gateway coerces the same values (shared/schemas/pydantic-lax.ts) for every model, and forwards what it coerced.

const { upstream, caller, model } = await upstreamModelFixture()
const reference = `test-org/reference-${randomUUID().slice(0, 8)}`
await putModel(referenceCatalogModel({ id: reference, root: reference, entities: [caller.entity] }))
clearCatalogCache()

const messages = [{ role: 'user', content: 'Hello big world' }]

function chat(body: Record<string, unknown>) {
  return app.request('/v1/chat/completions', jsonInit({ messages, ...body }, caller.bearer))
}

type ErrorBody = { error: { message: string; type: string; param: string | null; code: number } }

describe('POST /v1/chat/completions with lax (pydantic) typing', () => {
  it('forwards the coerced values to an upstream: numbers and booleans, not strings', async () => {
    // Prepare
    const before = upstream.seen.length

    // Act
    const res = await chat({
      model,
      temperature: '0.5',
      max_tokens: '5',
      logprobs: 1,
      top_logprobs: 2,
      seed: ' 42 ',
      ignore_eos: 'no',
      logit_bias: { '7': '-1.5' },
      stop_token_ids: ['3', 4],
      response_format: { type: 'json_schema', json_schema: { name: 'a', schema: { type: 'object' }, strict: 'true' } },
    })

    // Assess
    expect(res.status).toBe(200)
    const forwarded = upstream.seen[before]?.body ?? {}
    expect(forwarded).toMatchObject({
      temperature: 0.5,
      max_tokens: 5,
      logprobs: true,
      top_logprobs: 2,
      seed: 42,
      ignore_eos: false,
      logit_bias: { '7': -1.5 },
      stop_token_ids: [3, 4],
      response_format: { json_schema: { strict: true } },
    })
    expect(upstream.seen[before]?.raw).toContain('"temperature":0.5')
  })

  it('streams when stream is "true" and reads stream_options flags given as strings', async () => {
    // Prepare
    const before = upstream.seen.length

    // Act
    const res = await chat({ model, stream: 'true', stream_options: { include_usage: 'yes' } })

    // Assess
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    const chunks = sseChunks(await res.text()) as { choices: unknown[]; usage?: unknown }[]
    expect(chunks.at(-1)?.choices).toEqual([])
    expect(chunks.at(-1)?.usage).toBeDefined()
    expect(upstream.seen[before]?.body.stream).toBe(true)
  })

  it('gives the reference engine the coerced values (max_tokens "3" ends at three tokens)', async () => {
    // Act
    const res = await chat({ model: reference, max_tokens: '3', temperature: '0', logprobs: 'true', top_logprobs: 1 })

    // Assess
    expect(res.status).toBe(200)
    const body = (await res.json()) as {
      choices: { finish_reason: string; logprobs: { content: unknown[] } }[]
      usage: { completion_tokens: number }
    }
    expect(body.usage.completion_tokens).toBeLessThanOrEqual(3)
    expect(body.choices[0]?.logprobs.content).toHaveLength(body.usage.completion_tokens)
  })

  it.each([
    ['max_tokens', '5.5', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer'],
    ['n', 1.5, 'int_from_float', 'Input should be a valid integer, got a number with a fractional part'],
    ['temperature', 'warm', 'float_parsing', 'Input should be a valid number, unable to parse string as a number'],
    ['temperature', [0.5], 'float_type', 'Input should be a valid number'],
    ['stream', 'maybe', 'bool_parsing', 'Input should be a valid boolean, unable to interpret input'],
    ['logprobs', 2, 'bool_parsing', 'Input should be a valid boolean, unable to interpret input'],
    ['echo', null, 'bool_type', 'Input should be a valid boolean'],
  ])('refuses %s = %j as pydantic does (%s)', async (field, value, type, msg) => {
    // Act
    const res = await chat({ model, [field]: value })

    // Assess
    expect(res.status).toBe(400)
    const { error } = (await res.json()) as ErrorBody
    expect(error.type).toBe('Bad Request')
    expect(error.param).toBe(`body.${field}`)
    expect(error.message).toContain(`{'type': '${type}', 'loc': ('body', '${field}'), 'msg': '${msg}'`)
  })

  it('keeps the raw-body validators on the raw values, as vLLM does ("false" is a truthy string there)', async () => {
    // Act: Python's `data.get("stream")` is the string "false", which is truthy, so stream_options passes.
    const res = await chat({ model, stream: 'false', stream_options: { include_usage: true } })

    // Assess: and the parsed `stream` is False, so the answer is one JSON body.
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/json')
  })
})
