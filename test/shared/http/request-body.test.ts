import { describe, expect, it } from 'vitest'
import * as z from 'zod/mini'
import { config } from '#shared/config'
import { createInferenceApp, createTracingApp, createTrainingApp } from '#shared/http/create-app'
import { excessNesting, MAX_JSON_DEPTH } from '#shared/http/read-json'
import { validate } from '#shared/http/validate'
import { newCaller } from '../../support/auth.js'

const Body = z.object({ name: z.string(), count: z.optional(z.int().check(z.minimum(1))) })

const apps = {
  inference: createInferenceApp().post('/v1/echo', validate('json', Body), (c) => c.json(c.req.valid('json'))),
  training: createTrainingApp().post('/v1/preview/echo', validate('json', Body), (c) => c.json(c.req.valid('json'))),
  tracing: createTracingApp().post('/echo', validate('json', Body), (c) => c.json(c.req.valid('json'))),
}
const paths = { inference: '/v1/echo', training: '/v1/preview/echo', tracing: '/echo' }

async function send(family: keyof typeof apps, body: string | Uint8Array<ArrayBuffer>, contentType?: string) {
  const caller = await newCaller()
  const headers: Record<string, string> = { ...caller.bearer }
  if (contentType !== undefined) headers['content-type'] = contentType
  const res = await apps[family].request(paths[family], { method: 'POST', headers, body })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

describe('JSON request bodies', () => {
  it('accepts a valid body in every family and ignores unknown fields', async () => {
    for (const family of ['inference', 'training', 'tracing'] as const) {
      const res = await send(family, JSON.stringify({ name: 'a', extra: true }), 'application/json')
      expect(res).toEqual({ status: 200, body: { name: 'a' } })
    }
  })

  it('answers malformed JSON with 400 (inference) or 422 json_invalid (tracing, training)', async () => {
    const inference = await send('inference', '{"name": ', 'application/json')
    expect(inference.status).toBe(400)
    expect(inference.body.error).toMatchObject({ type: 'Bad Request', code: 400 })
    expect((inference.body.error as { message: string }).message).toMatch(
      /^1 validation error:\n {2}\{'type': 'json_invalid'/,
    )
    for (const family of ['training', 'tracing'] as const) {
      const res = await send(family, '{"name": ', 'application/json')
      expect(res.status).toBe(422)
      expect(res.body).toEqual({
        detail: [
          {
            type: 'json_invalid',
            loc: ['body', 9],
            msg: 'JSON decode error',
            input: {},
            ctx: { error: expect.any(String) },
          },
        ],
      })
    }
  })

  it('rejects arrays and objects nested deeper than the limit before any handler sees them', async () => {
    const nested = (depth: number) => `{"name":"a","x":${'['.repeat(depth)}${']'.repeat(depth)}}`
    // The body object is one level, so the deepest allowed array run is one shorter than the limit.
    for (const family of ['inference', 'training', 'tracing'] as const) {
      const ok = await send(family, nested(MAX_JSON_DEPTH - 1), 'application/json')
      expect(ok).toEqual({ status: 200, body: { name: 'a' } })
      const deep = await send(family, nested(6_000), 'application/json')
      expect(deep.status).toBe(family === 'inference' ? 400 : 422)
      const detail = family === 'inference' ? (deep.body.error as { message: string }).message : deep.body.detail
      if (family === 'inference') expect(detail).toMatch(/json_invalid.*nested deeper than 200 levels/s)
      else {
        expect(detail).toEqual([
          {
            type: 'json_invalid',
            loc: ['body', '{"name":"a","x":'.length + MAX_JSON_DEPTH - 1],
            msg: 'JSON decode error',
            input: {},
            ctx: { error: 'arrays and objects nested deeper than 200 levels' },
          },
        ])
      }
    }
  })

  it('counts nesting outside strings only', () => {
    expect(excessNesting('[[[]]]', 2)).toBe(2)
    expect(excessNesting('[[]]  ', 2)).toBe(-1)
    expect(excessNesting('["[[[[", "\\\\", "\\\\"]', 2)).toBe(-1)
    expect(excessNesting('["\\"[[[", [[]]]', 3)).toBe(-1)
    expect(excessNesting('[{"a":{"b":[1]}}]   ', 3)).toBe(11)
  })

  it('requires application/json on inference and rejects other types elsewhere with 422', async () => {
    const missing = await send('inference', new TextEncoder().encode(JSON.stringify({ name: 'a' })))
    const text = await send('inference', JSON.stringify({ name: 'a' }), 'text/plain')
    for (const res of [missing, text]) {
      expect(res).toEqual({
        status: 400,
        body: {
          error: {
            message: "Unsupported Media Type: Only 'application/json' is allowed",
            type: 'Bad Request',
            param: null,
            code: 400,
          },
        },
      })
    }
    const tracingText = await send('tracing', 'name=a', 'text/plain')
    expect(tracingText.status).toBe(422)
    expect((tracingText.body.detail as { type: string }[])[0]?.type).toBe('model_attributes_type')
  })

  it('parses a tracing or training body sent without a content type as JSON, as FastAPI does', async () => {
    for (const family of ['tracing', 'training'] as const) {
      // A byte body carries no implicit content type (a string body would get text/plain).
      const bytes = new TextEncoder().encode(JSON.stringify({ name: 'b' }))
      expect(await send(family, bytes)).toEqual({ status: 200, body: { name: 'b' } })
    }
  })

  it('reports schema problems with pydantic locations and messages', async () => {
    const res = await send('tracing', JSON.stringify({ count: 0 }), 'application/json')
    expect(res).toEqual({
      status: 422,
      body: {
        detail: [
          { type: 'missing', loc: ['body', 'name'], msg: 'Field required' },
          {
            type: 'greater_than_equal',
            loc: ['body', 'count'],
            msg: 'Input should be greater than or equal to 1',
            input: 0,
          },
        ],
      },
    })
  })

  it('renders inference validation errors as vLLM does, with the first location as param', async () => {
    const res = await send('inference', JSON.stringify({ name: 3 }), 'application/json')
    expect(res).toEqual({
      status: 400,
      body: {
        error: {
          message:
            "1 validation error:\n  {'type': 'string_type', 'loc': ('body', 'name'), 'msg': 'Input should be a valid string', 'input': 3}",
          type: 'Bad Request',
          param: 'body.name',
          code: 400,
        },
      },
    })
  })

  it('answers an empty body and a JSON non-object with a 4xx, never a 500', async () => {
    for (const family of ['inference', 'training', 'tracing'] as const) {
      for (const body of ['', '[]', '"text"', 'null', '12']) {
        const res = await send(family, body, 'application/json')
        expect([400, 422]).toContain(res.status)
      }
    }
  })

  it('answers an oversized body with 413 in the family shape', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(config.maxBodyBytes + 1) })
    const inference = await send('inference', big, 'application/json')
    const tracing = await send('tracing', big, 'application/json')
    const training = await send('training', big, 'application/json')
    expect(inference.status).toBe(413)
    expect(inference.body.error).toMatchObject({ code: 413 })
    expect(tracing).toEqual({ status: 413, body: { reason: 'Request too large' } })
    expect(training.status).toBe(413)
    expect(training.body.detail).toMatch(/larger than/)
  })
})
