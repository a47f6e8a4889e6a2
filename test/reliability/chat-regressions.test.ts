import { describe, expect, it } from 'vitest'
import { app } from '#functions/inference/create-chat-completion/handler'
import { putModel } from '#shared/db/model-repository'
import { referenceCatalogModel } from '#shared/engine/settings'
import { clearCatalogCache } from '#shared/inference/catalog'
import { jsonInit } from '../support/auth.js'
import { upstreamModelFixture } from '../support/models.js'
import { sseEvents } from '../support/sse.js'

// Chat-completion inputs the chat fuzzer (chat-fuzz.test.ts) found answered with a 5xx; each is pinned here.

const { upstream, caller, model } = await upstreamModelFixture()

const messages = [{ role: 'user', content: 'Hello big world' }]

describe('a body request_id that is no valid HTTP header value', () => {
  it.each([
    ['non-Latin-1 characters', '񡮑򺧂ꋄ'],
    ['a control character', 'a\u0000b'],
    ['a line break', 'a\r\nX-Injected: 1'],
    ['20,000 characters', 'x'.repeat(20_000)],
  ])('with %s still completes, with the id in the response and not forwarded upstream', async (_name, requestId) => {
    // Prepare
    const before = upstream.seen.length

    // Act
    const res = await app.request(
      '/v1/chat/completions',
      jsonInit({ model, messages, request_id: requestId }, caller.bearer),
    )
    const body = (await res.json()) as { id: string; choices: { message: { content: string } }[] }

    // Assess
    expect(res.status).toBe(200)
    expect(body.id).toBe(`chatcmpl-${requestId}`)
    expect(body.choices[0]?.message.content).toBe('Hello big world')
    expect(upstream.seen.slice(before).map((s) => s.headers['x-request-id'])).toEqual([undefined])
  })

  it('streams too, ending with [DONE]', async () => {
    // Act
    const res = await app.request(
      '/v1/chat/completions',
      jsonInit({ model, messages, request_id: 'ünïcödé 💥', stream: true }, caller.bearer),
    )
    const events = sseEvents(await res.text())

    // Assess
    expect(res.status).toBe(200)
    expect(events.at(-1)).toBe('[DONE]')
    expect(events.some((e) => e.includes('"error"'))).toBe(false)
  })

  it('forwards a plain request_id upstream as X-Request-Id', async () => {
    // Prepare
    const before = upstream.seen.length

    // Act
    const res = await app.request(
      '/v1/chat/completions',
      jsonInit({ model, messages, request_id: 'req-42' }, caller.bearer),
    )

    // Assess
    expect(res.status).toBe(200)
    expect(upstream.seen.slice(before).map((s) => s.headers['x-request-id'])).toEqual(['req-42'])
  })
})

describe('an n too large for the reference engine', () => {
  it.each([
    [false, 1.7976931348623157e308],
    [true, 1e7],
  ])('(stream %s, n %d) is a 400 on n, not an exhausted heap', async (stream, n) => {
    // Prepare
    await putModel(referenceCatalogModel())
    clearCatalogCache()

    // Act
    const res = await app.request(
      '/v1/chat/completions',
      jsonInit({ model: 'loom/reference-1', messages, max_tokens: 8, n, stream }, caller.bearer),
    )
    const body = (await res.json()) as { error: { message: string; param: string; code: number } }

    // Assess
    expect(res.status).toBe(400)
    // Above vLLM's own bound (VLLM_MAX_N_SEQUENCES, 16384) the gateway answers before the engine's maxN applies.
    // vLLM's n check carries no parameter (param null).
    expect(body.error).toMatchObject({
      param: null,
      code: 400,
      message: `n must be at most 16384, got ${BigInt(n)}. To increase this limit, set the VLLM_MAX_N_SEQUENCES environment variable.`,
    })
  })
})
